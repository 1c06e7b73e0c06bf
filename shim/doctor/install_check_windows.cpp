// Windows: the journal at its default place, read through the node's registry, files, services
// and pipes (shim/windows/windows_node_system.h).
#include "shim/doctor/install_check.h"
#include "shim/node/installer.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim::doctor {

Checks CheckInstall() {
  const auto node = windows::MakeWindowsNodeSystem();
  return InstallLines(
      node::InstallHealth(*node, node->ExpandEnvironment(node::kDefaultRecordPath)));
}

}  // namespace dxshim::doctor
