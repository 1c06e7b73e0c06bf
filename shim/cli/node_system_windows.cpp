// node_system.h on Windows: the real node's system and this program's path, from
// shim/windows/windows_node_system.h and devices/windows/child_run.h.
#include <stdexcept>

#include "devices/windows/child_run.h"
#include "devices/windows/wide_text.h"
#include "shim/cli/node_system.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim {

std::unique_ptr<install::NodeSystem> MakeNodeSystem() { return windows::MakeWindowsNodeSystem(); }

std::string ThisProgramPath() {
  const auto path = devices::windows::ThisProgramPath();
  if (path.empty()) throw std::runtime_error("is not known (GetModuleFileNameW failed)");
  return devices::windows::Narrow(path.data(), path.size());
}

}  // namespace dxshim
