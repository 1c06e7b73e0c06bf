// The device sources a `device-source` spec names: an inventory file, Linux discovery (sysfs), or
// Windows discovery (devices/windows/, the Windows build). Above both the DeviceSource interface
// and the backends, so that the backends depend on the interface and nothing depends back.
#pragma once

#include <memory>
#include <string>

#include "devices/device_source.h"

namespace dxshim::devices {

// "inventory:PATH", "linux" (with `sysfs_root`), "auto" (this platform's discovery); "windows"
// only in the Windows build. Throws std::invalid_argument for anything else.
std::unique_ptr<DeviceSource> MakeDeviceSource(const std::string& spec,
                                               const std::string& sysfs_root = "/sys");

}  // namespace dxshim::devices
