// Spelled the same in Winsock and POSIX (getsockname, getpeername, inet_pton, inet_ntop, socklen_t:
// an int in ws2tcpip.h); only the headers differ (native_net.h).
#include "shim/socket_bridge/tcp_endpoint.h"

#include <algorithm>
#include <cstring>

#include "native_net.h"  // windows/ or posix/, by CMake

namespace dxshim::socket_bridge {
namespace {

constexpr std::array<std::uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

std::optional<TcpEndpoint> FromAddress(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    TcpEndpoint e;
    std::memcpy(e.address.data(), &in.sin_addr, 4);
    e.port = ntohs(in.sin_port);
    return e;
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    std::uint8_t bytes[16];
    std::memcpy(bytes, &in6.sin6_addr, 16);
    return EndpointFromBytes(bytes, 16, ntohs(in6.sin6_port));
  }
  return std::nullopt;
}

}  // namespace

TcpEndpoint EndpointFromBytes(const std::uint8_t* bytes, std::size_t size, std::uint16_t port) {
  TcpEndpoint e;
  e.port = port;
  // An IPv6 address that maps an IPv4 one is that IPv4 address.
  if (size == 16 && std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), bytes)) {
    std::memcpy(e.address.data(), bytes + 12, 4);
  } else if (size == 16) {
    e.v6 = true;
    std::memcpy(e.address.data(), bytes, 16);
  } else {
    std::memcpy(e.address.data(), bytes, std::min<std::size_t>(size, 4));
  }
  return e;
}

std::string TcpEndpoint::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(v6 ? AF_INET6 : AF_INET, address.data(), text, sizeof text) == nullptr) {
    return "?:" + std::to_string(port);
  }
  return v6 ? "[" + std::string(text) + "]:" + std::to_string(port)
            : std::string(text) + ":" + std::to_string(port);
}

bool TcpEndpoint::loopback() const {
  if (!v6) return address[0] == 127;
  constexpr std::array<std::uint8_t, 16> kLoopback6 = {0, 0, 0, 0, 0, 0, 0, 0,
                                                       0, 0, 0, 0, 0, 0, 0, 1};
  return address == kLoopback6;
}

std::optional<TcpEndpoint> LocalEndpoint(NativeSocket s) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (getsockname(s, reinterpret_cast<sockaddr*>(&address), &size) != 0) return std::nullopt;
  return FromAddress(address);
}

std::optional<TcpEndpoint> RemoteEndpoint(NativeSocket s) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (getpeername(s, reinterpret_cast<sockaddr*>(&address), &size) != 0) return std::nullopt;
  return FromAddress(address);
}

std::optional<TcpConnection> ConnectionOf(NativeSocket s) {
  auto local = LocalEndpoint(s);
  auto remote = RemoteEndpoint(s);
  if (!local || !remote) return std::nullopt;
  return TcpConnection{*local, *remote};
}

std::optional<TcpEndpoint> MakeEndpoint(std::string_view address, std::uint16_t port) {
  const std::string text(address);
  if (text.find(':') == std::string::npos) {
    in_addr v4{};
    if (inet_pton(AF_INET, text.c_str(), &v4) != 1) return std::nullopt;
    TcpEndpoint e;
    std::memcpy(e.address.data(), &v4, 4);
    e.port = port;
    return e;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1) return std::nullopt;
  std::uint8_t bytes[16];
  std::memcpy(bytes, &v6, 16);
  return EndpointFromBytes(bytes, 16, port);
}

}  // namespace dxshim::socket_bridge
