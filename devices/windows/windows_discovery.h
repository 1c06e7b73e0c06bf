// Windows only: the node's GPUs, put together from DXCore (which adapters exist and what they
// are), CfgMgr32 (their PnP device: id, location path, driver key, PCI address), D3DKMT
// (DriverStore folder), the driver's CopyToVm* registry values (runtime files) and, for NVIDIA
// GPUs, their UUIDs: from CUDA by adapter LUID, else from NVML by PCI address (gpu_uuids.h), both
// asked in a short-lived child on every discovery (nvidia_query.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "devices/device.h"
#include "devices/windows/dxcore_adapters.h"
#include "devices/windows/nvidia_query.h"

namespace dxshim::devices::windows {

struct WindowsDiscoveryResult {
  std::vector<Device> devices;        // sorted by location path; integrated/detachable included
  std::vector<std::string> warnings;  // skipped adapters, refused registry values, ...
  std::vector<std::string> debug;     // facts not found that change nothing else (NVIDIA UUIDs)
  bool in_container = false;          // DriverStore paths are a container's HostDriverStore view
};

class WindowsDiscovery {
 public:
  // `nvidia` says which program answers `nvidia-uuids` (this one by default) and how long it may
  // take.
  explicit WindowsDiscovery(NvidiaQuery nvidia = {}) : nvidia_(std::move(nvidia)) {}

  // A fresh enumeration. An adapter that cannot be described completely is left out with a
  // warning naming it; a failed system call for the whole node throws std::runtime_error (DXCore
  // unavailable, say). CUDA and NVML are asked here only, in a child each time, so once per change
  // of the adapters (Stale()), never per refresh.
  // kSkipped leaves out the DriverStore folders and runtime files (D3DKMT and the registry):
  // what `dxshim-devices.exe uuids` needs is the adapters and their PnP devices.
  enum class DriverFiles { kRead, kSkipped };
  WindowsDiscoveryResult Discover(DriverFiles driver_files = DriverFiles::kRead);

  // Cheap hot-plug check: true when the adapters changed since the last Discover().
  bool Stale() const { return adapters_.Stale(); }

 private:
  NvidiaQuery nvidia_;
  DxCoreAdapters adapters_;
};

}  // namespace dxshim::devices::windows
