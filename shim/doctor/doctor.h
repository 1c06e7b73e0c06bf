// `dxshim doctor`: the node's whole GPU path checked in order, each check a line (doctor_check.h):
//   1. the configuration (the caller's: it reads it),  2. dxshim answers on `listen`,
//   3. the runtime answers on `runtime` (on Windows containerd ≥ 1.7),  4. kubelet points at
//   dxshim, and (Windows) what `dxshim install`'s journal says of the node,  5. the device plugin
//   is served and registered,  6. no other GPU device plugin is registered with kubelet,
//   7. the GPUs and their runtime files,  8. vm-runtime-handlers against the runtime's handlers,
//   9. the metrics endpoint's /readyz,  10. (Windows) windows_exporter's gpu collector against
//   the GPUs of 7 (windows_exporter_check.h),  11. who holds which GPU by the runtime's record.
#pragma once

#include <string>

#include "config/serve_config.h"
#include "shim/doctor/cri_checks.h"
#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

struct DoctorSetup {
  config::ServeConfig cfg;
  CriEndpoint listen;
  CriEndpoint runtime;
  bool windows_node = false;
  // Where windows_exporter listens ("HOST:PORT"); empty: no windows_exporter line.
  std::string windows_exporter;
};

// Checks 2 to 11, appended to `checks`.
void RunChecks(const DoctorSetup& setup, Checks& checks);

}  // namespace dxshim::doctor
