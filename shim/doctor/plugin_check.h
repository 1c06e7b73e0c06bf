// `dxshim doctor`'s check 5, per resource dxshim's device plugin serves (pod slots, and memory
// units when configured): its socket is in kubelet's device plugin folder, the plugin answers
// there (its first ListAndWatch list: what it advertises), and kubelet has the resource
// registered with as many healthy devices (kubelet's own checkpoint,
// shim/install/kubelet/kubelet_checkpoint.h).
#pragma once

#include <chrono>

#include "config/serve_config.h"
#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

// The plugin's list must come within `timeout`.
Checks CheckDevicePlugin(const config::ServeConfig& cfg, std::chrono::milliseconds timeout);

}  // namespace dxshim::doctor
