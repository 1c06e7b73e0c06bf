// `dxshim doctor`'s install check: what the journal of `dxshim install` says of this node now
// (shim/install/install_health.h). Windows only (install_check_windows.cpp): on Linux dxshim is put
// in kubelet's path by its systemd drop-in (deploy/linux), and the check has no line.
#pragma once

#include "shim/doctor/doctor_check.h"
#include "shim/install/install_health.h"

namespace dxshim::doctor {

Checks CheckInstall();

// The findings as doctor's lines.
Checks InstallLines(const std::vector<install::InstallFinding>& findings);

}  // namespace dxshim::doctor
