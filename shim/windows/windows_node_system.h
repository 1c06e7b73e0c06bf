// Windows only: install::NodeSystem on the real node: the registry (HKLM), files, the service
// control manager, the process list (command lines read from each process's PEB: wine has no
// ProcessCommandLineInformation), the pipes' server processes, and loopback HTTP.
#pragma once

#include <memory>

#include "shim/install/system/node_system.h"

namespace dxshim::windows {

std::unique_ptr<install::NodeSystem> MakeWindowsNodeSystem();

}  // namespace dxshim::windows
