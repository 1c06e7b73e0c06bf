#include "shim/doctor/install_check.h"

namespace dxshim::doctor {

Checks InstallLines(const std::vector<node::InstallFinding>& findings) {
  Checks lines;
  for (const auto& f : findings) {
    switch (f.level) {
      case node::InstallFinding::Level::kOk:
        lines.push_back(Ok("install", f.what));
        break;
      case node::InstallFinding::Level::kWarning:
        lines.push_back(Warning("install", f.what, f.fix));
        break;
      case node::InstallFinding::Level::kFailed:
        lines.push_back(Failed("install", f.what, f.fix));
        break;
    }
  }
  return lines;
}

}  // namespace dxshim::doctor
