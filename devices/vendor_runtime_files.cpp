#include "devices/vendor_runtime_files.h"

#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"

namespace dxshim::devices {

bool Matches(const VendorRuntimeFiles& extra, const Device& device) {
  if (extra.vendor_id != 0) return extra.vendor_id == device.vendor_id;
  return !extra.vendor.empty() && EqualsIgnoreCase(extra.vendor, device.vendor);
}

void AddVendorRuntimeFiles(std::vector<Device>& devices,
                           const std::vector<VendorRuntimeFiles>& extras) {
  for (auto& device : devices) {
    if (device.driver_store.empty()) continue;
    for (const auto& extra : extras) {
      if (!Matches(extra, device)) continue;
      MergeRuntimeFiles(device.system32, extra.system32);
      MergeRuntimeFiles(device.syswow64, extra.syswow64);
    }
  }
}

}  // namespace dxshim::devices
