// `dxshim doctor`'s check 6: no other GPU device plugin registered with kubelet beside dxshim's
// (shim/install/kubelet/other_gpu_plugins.h names them and cites why), by kubelet's checkpoint in
// `device-plugin-dir`. One is a failure with dxshim's device plugin on (each GPU advertised
// twice), a warning with it off (the other plugin and dxshim's annotations both hand out GPUs).
#pragma once

#include "config/serve_config.h"
#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

Check CheckOtherGpuPlugins(const config::ServeConfig& cfg);

}  // namespace dxshim::doctor
