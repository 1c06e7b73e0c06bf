// Windows only: the node's GPUs, put together from DXCore (which adapters exist and what they
// are), CfgMgr32 (their PnP device: id, location path, driver key, PCI address), D3DKMT
// (DriverStore folder), the driver's CopyToVm* registry values (runtime files) and, for NVIDIA
// GPUs, their UUIDs: from CUDA by adapter LUID, else from NVML by PCI address (gpu_uuids.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "devices/device.h"
#include "devices/gpu_uuids.h"
#include "devices/windows/dxcore_adapters.h"

namespace dxshim::devices::windows {

struct WindowsDiscoveryResult {
  std::vector<Device> devices;        // sorted by location path; integrated/detachable included
  std::vector<std::string> warnings;  // skipped adapters, refused registry values, ...
  std::vector<std::string> debug;     // facts not found that change nothing else (NVIDIA UUIDs)
  std::map<std::string, UuidPath> uuid_found_by;  // device id -> how its UUID was found
  bool in_container = false;  // DriverStore paths are a container's HostDriverStore view
};

class WindowsDiscovery {
 public:
  // Throws std::runtime_error when DXCore is unavailable.
  WindowsDiscovery() = default;

  // A fresh enumeration. An adapter that cannot be described completely is left out with a
  // warning naming it; a failed system call for the whole node throws std::runtime_error. CUDA
  // and NVML are asked here only, so once per change of the adapters (Stale()), never per
  // refresh.
  // kSkipped leaves out the DriverStore folders and runtime files (D3DKMT and the registry):
  // what `dxshim-devices.exe uuids` needs is the adapters and their PnP devices.
  enum class DriverFiles { kRead, kSkipped };
  WindowsDiscoveryResult Discover(DriverFiles driver_files = DriverFiles::kRead);

  // Cheap hot-plug check: true when the adapters changed since the last Discover().
  bool Stale() const { return adapters_.Stale(); }

 private:
  DxCoreAdapters adapters_;
};

}  // namespace dxshim::devices::windows
