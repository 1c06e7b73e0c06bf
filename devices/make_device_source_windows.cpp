// The Windows build's device sources: "auto" and "windows" are Windows discovery
// (devices/windows/), "linux" is still there for sysfs trees (platform_device_source.h).
#include "devices/platform_device_source.h"
#include "devices/windows/windows_device_source.h"

namespace dxshim::devices {

std::unique_ptr<DeviceSource> MakePlatformDeviceSource(const std::string& spec,
                                                       const std::string& sysfs_root) {
  if (spec == "auto" || spec == "windows") return std::make_unique<windows::WindowsDeviceSource>();
  if (spec == "linux") return MakeLinuxSource(sysfs_root);
  return nullptr;
}

}  // namespace dxshim::devices
