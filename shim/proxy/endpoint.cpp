// Endpoints as written in flags and configuration, parsed: tcp:// here, the rest (unix sockets,
// named pipes) by this platform's ParseLocalEndpoint (endpoint_windows.cpp, endpoint_posix.cpp).
#include "shim/proxy/endpoint.h"

#include <stdexcept>
#include <variant>

#include "shim/base/host_port.h"
#include "shim/proxy/endpoint_platform.h"
#include "shim/proxy/pipe_name.h"

namespace dxshim {

[[noreturn]] void RejectEndpoint(std::string_view text, std::string_view why) {
  throw std::invalid_argument("endpoint '" + std::string(text) + "': " + std::string(why));
}

namespace {

constexpr std::string_view kTcpScheme = "tcp://";

Endpoint ParseTcp(std::string_view text, std::string_view hostport) {
  const auto parsed = ParseHostPort(hostport);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    RejectEndpoint(text, "expected tcp://host:port (" + *why + ")");
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
  if (text.empty()) RejectEndpoint(text, "empty endpoint");
  if (text.starts_with(kTcpScheme)) return ParseTcp(text, text.substr(kTcpScheme.size()));
  return ParseLocalEndpoint(text);
}

}  // namespace dxshim
