// The device snapshot a configuration describes: its source (device-source, sysfs-root), its
// filters, the operator's extra runtime files and the refresh interval. Built here once for
// `serve`, `device-plugin`, `rewrite` and `doctor`.
#pragma once

#include <memory>

#include "config/serve_config.h"
#include "devices/device_source.h"

namespace dxshim::config {

// The snapshot's settings; `loaded` and tolerate_initial_failure are the caller's.
devices::SnapshotOptions SnapshotOptionsOf(const ServeConfig& cfg);
// The source the snapshot reads. Throws for a source that is not valid at all.
std::unique_ptr<devices::DeviceSource> DeviceSourceOf(const ServeConfig& cfg);

}  // namespace dxshim::config
