#include "shim/doctor/endpoint_identity.h"

#include <algorithm>
#include <cctype>

#include "shim/base/ascii_case.h"
#include "shim/install/kubelet/kubelet_launch.h"

namespace dxshim::doctor {
namespace {

std::string Normal(const std::string& endpoint) {
  auto pipe = install::PipePathOf(endpoint);
  if (pipe.rfind("\\\\.\\pipe\\", 0) == 0) return pipe;
  std::string path = endpoint;
  if (path.rfind("unix://", 0) == 0) {
    path = path.substr(7);
  } else if (path.rfind("unix:", 0) == 0) {
    path = path.substr(5);
  }
  // "//run/x" and "/run//x" are the same file.
  std::string out;
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  return out;
}

}  // namespace

bool SameEndpoint(const std::string& a, const std::string& b) { return Normal(a) == Normal(b); }

std::string Describe(const ServerProcess& server) {
  return server.program + " (pid " + std::to_string(server.pid) + ")";
}

bool IsDxshim(const std::string& program) {
  const std::string lower = ToLowerAscii(program);
  return lower == "dxshim" || lower == "dxshim.exe";
}

}  // namespace dxshim::doctor
