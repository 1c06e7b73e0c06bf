// The POSIX build's device sources: "auto" and "linux" are Linux discovery; "windows" is refused,
// naming the build that has it (platform_device_source.h).
#include <stdexcept>

#include "devices/platform_device_source.h"

namespace dxshim::devices {

std::unique_ptr<DeviceSource> MakePlatformDeviceSource(const std::string& spec,
                                                       const std::string& sysfs_root) {
  if (spec == "auto" || spec == "linux") return MakeLinuxSource(sysfs_root);
  if (spec == "windows") {
    throw std::invalid_argument(
        "device source 'windows': Windows discovery is part of the Windows build of dxshim "
        "(on this platform use linux or inventory:PATH)");
  }
  return nullptr;
}

}  // namespace dxshim::devices
