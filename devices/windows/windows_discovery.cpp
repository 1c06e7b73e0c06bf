#include "devices/windows/windows_discovery.h"

#include <algorithm>
#include <exception>

#include "devices/windows/cuda_uuids.h"
#include "devices/windows/driver_store.h"
#include "devices/windows/nvml_uuids.h"
#include "devices/windows/pnp_devices.h"
#include "devices/windows/registry_runtime_files.h"
#include "devices/windows_adapter.h"

namespace dxshim::devices::windows {

namespace {

// NVIDIA GPUs' UUIDs (CUDA_VISIBLE_DEVICES in their containers): CUDA by LUID, else NVML by PCI
// address. Neither library is loaded on a node without NVIDIA adapters.
void NameNvidiaGpus(const std::vector<std::pair<std::size_t, NvidiaAdapter>>& nvidia,
                    WindowsDiscoveryResult& result) {
  if (nvidia.empty()) return;
  std::vector<NvidiaAdapter> adapters;
  for (const auto& [index, adapter] : nvidia) adapters.push_back(adapter);
  auto cuda = ReadCudaUuids();
  for (auto& line : cuda.debug) result.debug.push_back(std::move(line));
  const auto found = MatchNvidiaUuids(
      adapters, cuda.by_luid,
      [&result](const std::vector<std::string>& bus_ids) {
        auto nvml = ReadNvmlUuids(bus_ids);
        for (auto& line : nvml.debug) result.debug.push_back(std::move(line));
        return nvml.by_bus_id;
      },
      result.debug);
  for (std::size_t i = 0; i < nvidia.size(); ++i) {
    if (!found[i]) continue;
    auto& device = result.devices[nvidia[i].first];
    device.uuid = found[i]->uuid;
    result.uuid_found_by[device.id] = found[i]->path;
  }
}

// The adapter's DriverStore folder and the runtime files its driver registers; what cannot be
// read is a warning naming `name`.
std::pair<std::string, RegistryRuntimeFiles> ReadDriverFiles(std::uint64_t luid,
                                                             const PnpFacts& node,
                                                             const std::string& name,
                                                             WindowsDiscoveryResult& result) {
  std::string driver_store;
  RegistryRuntimeFiles files;
  try {
    driver_store = QueryDriverStorePath(luid);
    if (IsContainerDriverStore(driver_store)) result.in_container = true;
  } catch (const std::exception& e) {
    result.warnings.push_back(name + ": no DriverStore folder, so no runtime files: " + e.what());
  }
  if (!driver_store.empty() && !node.driver_key.empty()) {
    files = ReadRegistryRuntimeFiles(node.driver_key);
    for (const auto& refused : files.refused) {
      result.warnings.push_back(name + ": refused registry value " + refused);
    }
  }
  return {std::move(driver_store), std::move(files)};
}

}  // namespace

WindowsDiscoveryResult WindowsDiscovery::Discover(DriverFiles driver_files) {
  WindowsDiscoveryResult result;
  const auto adapters = adapters_.Enumerate();
  const auto pnp = PnpDevicesByLuid();
  std::vector<std::pair<std::size_t, NvidiaAdapter>> nvidia;  // device index, what names it
  for (const auto& adapter : adapters) {
    const auto name = "adapter " + FormatLuid(adapter.luid) +
                      (adapter.description.empty() ? "" : " (" + adapter.description + ")");
    if (const auto reason = SkipReason(adapter)) {
      result.warnings.push_back("skipped " + name + ": " + *reason);
      continue;
    }
    const auto node = pnp.find(adapter.luid);
    if (node == pnp.end()) {
      result.warnings.push_back("skipped " + name + ": no PnP device carries its GPU LUID");
      continue;
    }
    try {
      auto [driver_store, files] = driver_files == DriverFiles::kRead
                                       ? ReadDriverFiles(adapter.luid, node->second, name, result)
                                       : std::pair<std::string, RegistryRuntimeFiles>();
      result.devices.push_back(MakeWindowsDevice(adapter, node->second, driver_store,
                                                 std::move(files.system32),
                                                 std::move(files.syswow64)));
      if (result.devices.back().vendor_id == kNvidiaVendorId) {
        nvidia.emplace_back(result.devices.size() - 1,
                            NvidiaAdapter{name, adapter.luid, PciLocationOf(node->second)});
      }
    } catch (const std::exception& e) {
      result.warnings.push_back("skipped " + name + ": " + e.what());
    }
  }
  NameNvidiaGpus(nvidia, result);
  std::sort(result.devices.begin(), result.devices.end(),
            [](const Device& a, const Device& b) { return a.location_path < b.location_path; });
  return result;
}

}  // namespace dxshim::devices::windows
