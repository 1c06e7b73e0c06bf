#include "devices/windows/windows_discovery.h"

#include <algorithm>
#include <exception>

#include "devices/windows/driver_store.h"
#include "devices/windows/nvml_uuids.h"
#include "devices/windows/pnp_devices.h"
#include "devices/windows/registry_runtime_files.h"
#include "devices/windows_adapter.h"

namespace dxshim::devices::windows {

WindowsDiscoveryResult WindowsDiscovery::Discover() {
  WindowsDiscoveryResult result;
  const auto adapters = adapters_.Enumerate();
  const auto pnp = PnpDevicesByLuid();
  std::vector<std::pair<std::size_t, std::string>> nvidia_bus_ids;  // device index, PCI address
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
      std::string driver_store;
      RegistryRuntimeFiles files;
      try {
        driver_store = QueryDriverStorePath(adapter.luid);
        if (IsContainerDriverStore(driver_store)) result.in_container = true;
      } catch (const std::exception& e) {
        result.warnings.push_back(name +
                                  ": no DriverStore folder, so no runtime files: " + e.what());
      }
      if (!driver_store.empty() && !node->second.driver_key.empty()) {
        files = ReadRegistryRuntimeFiles(node->second.driver_key);
        for (const auto& refused : files.refused) {
          result.warnings.push_back(name + ": refused registry value " + refused);
        }
      }
      result.devices.push_back(MakeWindowsDevice(adapter, node->second, driver_store,
                                                 std::move(files.system32),
                                                 std::move(files.syswow64)));
      if (result.devices.back().vendor_id == kNvidiaVendorId) {
        nvidia_bus_ids.emplace_back(result.devices.size() - 1, NvmlPciBusId(node->second));
      }
    } catch (const std::exception& e) {
      result.warnings.push_back("skipped " + name + ": " + e.what());
    }
  }
  // NVIDIA GPUs' UUIDs (CUDA_VISIBLE_DEVICES in their containers), where NVML gives them.
  std::vector<std::string> bus_ids;
  for (const auto& [index, bus_id] : nvidia_bus_ids) {
    if (bus_id.empty()) {
      result.debug.push_back("no UUID for " + result.devices[index].id +
                             ": its PnP device has no PCI bus number or address");
    } else {
      bus_ids.push_back(bus_id);
    }
  }
  auto uuids = ReadNvmlUuids(bus_ids);
  for (const auto& [index, bus_id] : nvidia_bus_ids) {
    if (const auto found = uuids.by_bus_id.find(bus_id); found != uuids.by_bus_id.end()) {
      result.devices[index].uuid = found->second;
    }
  }
  for (auto& line : uuids.debug) result.debug.push_back(std::move(line));
  std::sort(result.devices.begin(), result.devices.end(),
            [](const Device& a, const Device& b) { return a.location_path < b.location_path; });
  return result;
}

}  // namespace dxshim::devices::windows
