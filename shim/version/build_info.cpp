#include "shim/version/build_info.h"

// DXSHIM_GIT_COMMIT, written at every build by cmake/write_build_info.cmake.
#include "build_info.inc"

namespace dxshim {
namespace {

#if defined(_WIN32)
#define DXSHIM_OS "windows"
#elif defined(__linux__)
#define DXSHIM_OS "linux"
#else
#define DXSHIM_OS "unknown"
#endif
#if defined(__x86_64__) || defined(_M_X64)
#define DXSHIM_ARCH "amd64"
#elif defined(__aarch64__) || defined(_M_ARM64)
#define DXSHIM_ARCH "arm64"
#else
#define DXSHIM_ARCH "unknown"
#endif

}  // namespace

const BuildInfo& ThisBuild() {
  static const BuildInfo info{DXSHIM_VERSION, DXSHIM_GIT_COMMIT, DXSHIM_OS "/" DXSHIM_ARCH};
  return info;
}

std::string VersionLine() {
  const auto& b = ThisBuild();
  return "dxshim " + std::string(b.version) + " (commit " + std::string(b.commit) + ", " +
         std::string(b.platform) + ")";
}

}  // namespace dxshim
