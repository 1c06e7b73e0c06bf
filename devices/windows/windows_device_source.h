// Windows only: the Windows discovery as the shim's DeviceSource. DXCore is loaded on the first
// Changed()/Load(), and the hot-plug check is DXCore's IsStale(): no enumeration until something
// changed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "devices/device_source.h"
#include "devices/windows/windows_discovery.h"

namespace dxshim::devices::windows {

class WindowsDeviceSource : public DeviceSource {
 public:
  std::string Name() const override { return "windows discovery"; }
  bool Changed() override;
  // Throws std::runtime_error when DXCore is missing or enumeration fails.
  std::vector<Device> Load() override;
  std::vector<std::string> Warnings() const override { return warnings_; }
  std::vector<std::string> DebugLines() const override { return debug_; }

 private:
  std::unique_ptr<WindowsDiscovery> discovery_;
  std::vector<std::string> warnings_;
  std::vector<std::string> debug_;
};

}  // namespace dxshim::devices::windows
