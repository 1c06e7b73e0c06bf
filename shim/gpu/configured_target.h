// The injection target a configuration names (target, the Linux stand-ins for System32 and
// SysWOW64, the VM runtime handlers): built here once for `serve`, `rewrite` and `doctor`.
#pragma once

#include <functional>
#include <string>

#include "config/serve_config.h"
#include "shim/gpu/injection.h"

namespace dxshim {

// `host_file` says what is at a runtime file's host path (empty: every file counts as present).
TargetOptions ConfiguredTarget(
    const config::ServeConfig& cfg,
    std::function<HostFileState(const std::string& host_path)> host_file = {});

}  // namespace dxshim
