// The install journal on disk. It says what to write where, as SYSTEM: one that a user could have
// made (any user may create files under %ProgramData% before dxshim's folder exists) is refused.
#pragma once

#include <optional>
#include <string>

#include "shim/install/install_journal.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install {

// nullopt when there is none. Throws NodeError when it is not trusted or cannot be read.
std::optional<InstallJournal> LoadJournal(NodeSystem& node, const std::string& path);
// The journal on disk as it is in memory: written, or removed when it records nothing (Empty).
// Throws NodeError when it cannot be.
void KeepJournal(NodeSystem& node, const std::string& path, const InstallJournal& journal);

}  // namespace dxshim::install
