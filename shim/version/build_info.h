// What this binary is: its version, the git commit it was built from and its platform, for
// `dxshim --version`, the serve log and the dxshim_build_info metric.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

struct BuildInfo {
  std::string_view version;   // the project's version, "0.1.0"
  std::string_view commit;    // 12 hex digits, "-dirty" when built from changed sources
  std::string_view platform;  // "linux/amd64", "windows/amd64" (GOOS/GOARCH style, as kubectl)
};

const BuildInfo& ThisBuild();

// "dxshim 0.1.0 (commit 1a2b3c4d5e6f, linux/amd64)".
std::string VersionLine();

}  // namespace dxshim
