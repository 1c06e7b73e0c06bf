#include "devices/windows/windows_discovery.h"

#include <algorithm>
#include <exception>

#include "devices/gpu_uuids.h"
#include "devices/windows/driver_store.h"
#include "devices/windows/pnp_devices.h"
#include "devices/windows/registry_runtime_files.h"
#include "devices/windows_adapter.h"

namespace dxshim::devices::windows {

namespace {

// NVIDIA GPUs' UUIDs (CUDA_VISIBLE_DEVICES in their containers): CUDA by LUID, else NVML by PCI
// address, each asked in a child. Neither is asked on a node without NVIDIA adapters, and NVML only
// when CUDA did not name every one.
void NameNvidiaGpus(const std::vector<std::pair<std::size_t, NvidiaAdapter>>& nvidia,
                    const NvidiaQuery& query, WindowsDiscoveryResult& result) {
  if (nvidia.empty()) return;
  std::vector<NvidiaAdapter> adapters;
  for (const auto& [index, adapter] : nvidia) adapters.push_back(adapter);
  const auto cuda = AskCuda(query);
  auto& debug = result.debug;
  // A child that hung, crashed or garbled its answer is worth a warning: it costs every
  // discovery its deadline. No CUDA on the node is a fact, a debug line.
  if (!cuda.error.empty()) (cuda.child_failed ? result.warnings : debug).push_back(cuda.error);
  debug.insert(debug.end(), cuda.notes.begin(), cuda.notes.end());
  const auto by_luid = CudaUuidsByLuid(cuda, debug);
  const auto found = MatchNvidiaUuids(
      adapters, by_luid,
      [&query, &debug, &result](const std::vector<std::string>& bus_ids) {
        const auto nvml = AskNvml(query, bus_ids);
        if (!nvml.error.empty())
          (nvml.child_failed ? result.warnings : debug).push_back(nvml.error);
        debug.insert(debug.end(), nvml.notes.begin(), nvml.notes.end());
        for (const auto& [bus_id, why] : nvml.misses) {
          debug.push_back("NVML has no UUID for PCI " + bus_id + ": " + why);
        }
        return NvmlAnswer{nvml.uuids, nvml.device_count, nvml.error};
      },
      debug);
  for (std::size_t i = 0; i < nvidia.size(); ++i) {
    auto& device = result.devices[nvidia[i].first];
    device.uuid = found[i].uuid;
    device.uuid_found_by = found[i].found_by;
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
  NameNvidiaGpus(nvidia, nvidia_, result);
  std::sort(result.devices.begin(), result.devices.end(),
            [](const Device& a, const Device& b) { return a.location_path < b.location_path; });
  return result;
}

}  // namespace dxshim::devices::windows
