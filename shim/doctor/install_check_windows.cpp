// Windows: the journal at its default place, read through the node's registry, files, services
// and pipes (shim/windows/windows_node_system.h).
#include "shim/doctor/install_check.h"
#include "shim/install/installer.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim::doctor {

Checks CheckInstall() {
  const auto node = windows::MakeWindowsNodeSystem();
  return InstallLines(
      install::InstallHealth(*node, node->ExpandEnvironment(install::kDefaultRecordPath)));
}

}  // namespace dxshim::doctor
