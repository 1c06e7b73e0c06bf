#include "shim/doctor/install_check.h"

namespace dxshim::doctor {

Checks InstallLines(const std::vector<install::InstallFinding>& findings) {
  Checks lines;
  for (const auto& f : findings) {
    switch (f.level) {
      case install::InstallFinding::Level::kOk:
        lines.push_back(Ok("install", f.what));
        break;
      case install::InstallFinding::Level::kWarning:
        lines.push_back(Warning("install", f.what, f.fix));
        break;
      case install::InstallFinding::Level::kFailed:
        lines.push_back(Failed("install", f.what, f.fix));
        break;
    }
  }
  return lines;
}

}  // namespace dxshim::doctor
