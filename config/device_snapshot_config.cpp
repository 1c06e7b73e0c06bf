#include "config/device_snapshot_config.h"

#include "devices/make_device_source.h"

namespace dxshim::config {

devices::SnapshotOptions SnapshotOptionsOf(const ServeConfig& cfg) {
  devices::SnapshotOptions options;
  options.include_integrated = cfg.include_integrated;
  options.include_detachable = cfg.include_detachable;
  options.extra_runtime_files = cfg.extra_runtime_files;
  options.refresh_interval = cfg.device_refresh;
  return options;
}

std::unique_ptr<devices::DeviceSource> DeviceSourceOf(const ServeConfig& cfg) {
  return devices::MakeDeviceSource(cfg.device_source, cfg.sysfs_root);
}

}  // namespace dxshim::config
