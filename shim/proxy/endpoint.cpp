#include "shim/proxy/endpoint.h"

#include <stdexcept>
#include <variant>

#include "shim/base/host_port.h"
#include "shim/proxy/pipe_name.h"

namespace dxshim {
namespace {

constexpr std::string_view kUnixScheme = "unix://";
constexpr std::string_view kTcpScheme = "tcp://";

[[noreturn]] void Reject(std::string_view text, std::string_view why) {
  throw std::invalid_argument("endpoint '" + std::string(text) + "': " + std::string(why));
}

#ifndef _WIN32
Endpoint ParseUnix(std::string_view text, std::string_view path) {
  if (path.empty() || path.front() != '/') Reject(text, "a unix socket path must be absolute");
  if (path.find('\0') != std::string_view::npos) Reject(text, "the path contains a NUL byte");
  // sun_path holds 108 bytes including the terminating NUL.
  if (path.size() > 107) Reject(text, "the socket path is longer than 107 bytes");
  return Endpoint{Endpoint::Kind::kUnix, std::string(path)};
}
#endif

Endpoint ParseTcp(std::string_view text, std::string_view hostport) {
  const auto parsed = ParseHostPort(hostport);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    Reject(text, "expected tcp://host:port (" + *why + ")");
  }
  return Endpoint{Endpoint::Kind::kTcp, std::string(hostport)};
}

}  // namespace

std::string Endpoint::GrpcTarget() const {
  switch (kind) {
    case Kind::kUnix:
      return "unix:" + address;
    case Kind::kTcp:
      return address;
    case Kind::kPipe:
      break;
  }
  throw std::logic_error("named pipe " + address + " has no gRPC target; bridge it first");
}

std::string Endpoint::ToString() const {
  switch (kind) {
    case Kind::kUnix:
      return std::string(kUnixScheme) + address;
    case Kind::kTcp:
      return std::string(kTcpScheme) + address;
    case Kind::kPipe:
      break;
  }
  return PipeEndpointFromPath(address);
}

Endpoint ParseEndpoint(std::string_view text) {
  if (text.empty()) Reject(text, "empty endpoint");
  if (text.starts_with(kTcpScheme)) return ParseTcp(text, text.substr(kTcpScheme.size()));
#ifdef _WIN32
  if (text.starts_with(kPipeScheme))
    return Endpoint{Endpoint::Kind::kPipe, PipePathFromEndpoint(text)};
  if (text.starts_with(kUnixScheme) || text.front() == '/') {
    Reject(text,
           "the Windows build of dxshim serves npipe:// and tcp:// endpoints, not unix sockets");
  }
  Reject(text, "expected npipe://./pipe/<name> or tcp://host:port");
#else
  if (text.starts_with(kPipeScheme)) {
    PipePathFromEndpoint(text);  // a malformed pipe endpoint is reported as such
    Reject(text, "named pipes are only available in the Windows build of dxshim");
  }
  if (text.starts_with(kUnixScheme)) return ParseUnix(text, text.substr(kUnixScheme.size()));
  if (text.front() == '/') return ParseUnix(text, text);
  Reject(text, "expected unix:///path, an absolute socket path, or tcp://host:port");
#endif
}

}  // namespace dxshim
