// What this build is: the version and platform CMake names (DXSHIM_VERSION, DXSHIM_PLATFORM) and
// the git commit of the generated build_info.inc.
#include "shim/version/build_info.h"

// DXSHIM_GIT_COMMIT, written at every build by cmake/write_build_info.cmake.
#include "build_info.inc"

namespace dxshim {

const BuildInfo& ThisBuild() {
  static const BuildInfo info{DXSHIM_VERSION, DXSHIM_GIT_COMMIT, DXSHIM_PLATFORM};
  return info;
}

std::string VersionLine() {
  const auto& b = ThisBuild();
  return "dxshim " + std::string(b.version) + " (commit " + std::string(b.commit) + ", " +
         std::string(b.platform) + ")";
}

}  // namespace dxshim
