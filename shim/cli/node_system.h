// What `dxshim install` and `uninstall` need of the node they run on, behind one portable header
// (node_system_windows.cpp, node_system_posix.cpp): the node's system (the service control
// manager, the registry, files, processes) and this program's own path.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "shim/install/system/node_system.h"

namespace dxshim {

// What MakeNodeSystem throws where install does not run (not a Windows node): a usage error.
struct NotAWindowsNode : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The real node (Windows: shim/windows/windows_node_system.h). Throws NotAWindowsNode elsewhere,
// and std::runtime_error when the node's system cannot be opened (the service manager refused).
std::unique_ptr<install::NodeSystem> MakeNodeSystem();

// This program's own path, UTF-8 (Windows: GetModuleFileNameW; Linux: /proc/self/exe). Throws
// std::runtime_error (its text completes "the path of this program ...") when there is none.
std::string ThisProgramPath();

}  // namespace dxshim
