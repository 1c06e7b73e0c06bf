// node_system.h on POSIX: install and uninstall run on Windows nodes only (the service control
// manager and the registry); on Linux kubelet is pointed at dxshim by hand (docs/linux.md).
#include <filesystem>
#include <stdexcept>

#include "shim/cli/node_system.h"

namespace dxshim {

std::unique_ptr<install::NodeSystem> MakeNodeSystem() {
  throw NotAWindowsNode(
      "runs on Windows nodes (the service manager and the registry); on Linux see docs/linux.md, "
      "'Pointing kubelet at dxshim'");
}

std::string ThisProgramPath() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("is not known (/proc/self/exe: " + ec.message() + ")");
  return path.string();
}

}  // namespace dxshim
