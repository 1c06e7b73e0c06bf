// What MakeDeviceSource (make_device_source.h) leaves to the platform: which discovery "auto"
// means and whether "windows" can be had (make_device_source_windows.cpp, _posix.cpp). Internal
// to make_device_source.cpp.
#pragma once

#include <memory>
#include <string>

#include "devices/device_source.h"

namespace dxshim::devices {

// Linux discovery over sysfs at `sysfs_root` (make_device_source.cpp; both platforms have it).
std::unique_ptr<DeviceSource> MakeLinuxSource(const std::string& sysfs_root);

// "auto", "linux" or "windows" as this platform has them; nullptr for any other spec. Throws
// std::invalid_argument for "windows" where Windows discovery is not built.
std::unique_ptr<DeviceSource> MakePlatformDeviceSource(const std::string& spec,
                                                       const std::string& sysfs_root);

}  // namespace dxshim::devices
