#include "devices/windows/windows_device_source.h"

namespace dxshim::devices::windows {

bool WindowsDeviceSource::Changed() { return !discovery_ || discovery_->Stale(); }

std::vector<Device> WindowsDeviceSource::Load() {
  if (!discovery_) discovery_ = std::make_unique<WindowsDiscovery>();
  auto result = discovery_->Discover();
  warnings_ = std::move(result.warnings);
  debug_ = std::move(result.debug);
  if (result.in_container) {
    warnings_.push_back(
        "running inside a container: DriverStore paths are this container's HostDriverStore "
        "view, not host paths containerd could mount");
  }
  return std::move(result.devices);
}

}  // namespace dxshim::devices::windows
