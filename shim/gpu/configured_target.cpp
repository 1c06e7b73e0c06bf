#include "shim/gpu/configured_target.h"

namespace dxshim {

TargetOptions ConfiguredTarget(
    const config::ServeConfig& cfg,
    std::function<HostFileState(const std::string& host_path)> host_file) {
  TargetOptions target;
  target.target = cfg.target;
  target.linux_system32_path = cfg.linux_system32_path;
  target.linux_syswow64_path = cfg.linux_syswow64_path;
  target.host_file = std::move(host_file);
  target.vm_runtime_handlers = cfg.vm_runtime_handlers;
  return target;
}

}  // namespace dxshim
