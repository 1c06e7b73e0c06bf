// `dxshim doctor`'s check 6: each GPU the configuration's discovery hands out (its source, the
// integrated/detachable filters and the operator's extra runtime files, as serve reads them),
// with its vendor, memory and LUID, and whether each runtime file its driver lists is on the host
// now, by the check CreateContainer makes before mounting one (shim/gpu/host_files.h). ✗ when
// the DriverStore folder is gone or none of the files is there (a driver update or removal);
// ! when some are missing from a folder that is there: CreateContainer skips a file the driver
// never shipped, and refuses one it saw before, which only the running dxshim knows.
#pragma once

#include <vector>

#include "config/serve_config.h"
#include "devices/device.h"
#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

// `found` gets the GPUs (for the holders check).
Checks CheckGpus(const config::ServeConfig& cfg, std::vector<devices::Device>& found);

}  // namespace dxshim::doctor
