// ParseLocalEndpoint on POSIX: unix sockets (unix:///path or an absolute path, at most 107 bytes);
// named pipes are refused, a malformed one as such.
#include "shim/proxy/endpoint_platform.h"
#include "shim/proxy/pipe_name.h"

namespace dxshim {
namespace {

Endpoint ParseUnix(std::string_view text, std::string_view path) {
  if (path.empty() || path.front() != '/') {
    RejectEndpoint(text, "a unix socket path must be absolute");
  }
  if (path.find('\0') != std::string_view::npos) {
    RejectEndpoint(text, "the path contains a NUL byte");
  }
  // sun_path holds 108 bytes including the terminating NUL.
  if (path.size() > 107) RejectEndpoint(text, "the socket path is longer than 107 bytes");
  return Endpoint{Endpoint::Kind::kUnix, std::string(path)};
}

}  // namespace

Endpoint ParseLocalEndpoint(std::string_view text) {
  if (text.starts_with(kPipeScheme)) {
    PipePathFromEndpoint(text);  // a malformed pipe endpoint is reported as such
    RejectEndpoint(text, "named pipes are only available in the Windows build of dxshim");
  }
  if (text.starts_with(kUnixScheme)) return ParseUnix(text, text.substr(kUnixScheme.size()));
  if (text.front() == '/') return ParseUnix(text, text);
  RejectEndpoint(text, "expected unix:///path, an absolute socket path, or tcp://host:port");
}

}  // namespace dxshim
