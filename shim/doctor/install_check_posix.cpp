// Linux: no `dxshim install` (deploy/linux's systemd drop-in puts dxshim in kubelet's path).
#include "shim/doctor/install_check.h"

namespace dxshim::doctor {

Checks CheckInstall() { return {}; }

}  // namespace dxshim::doctor
