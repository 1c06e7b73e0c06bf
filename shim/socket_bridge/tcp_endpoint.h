// The two ends of a TCP connection, as the sockets API reports them (getsockname, getpeername)
// and as gRPC names a call's peer, in one form that compares exactly: the address family, all of
// the address and the port. An IPv4-mapped IPv6 address (::ffff:127.0.0.1, what a dual-stack
// socket shows) is the IPv4 address it maps. All of 127/8 is loopback on Linux and on Windows, so
// nothing here ever compares a port alone.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

struct TcpEndpoint {
  bool v6 = false;
  std::array<std::uint8_t, 16> address{};  // IPv4: the first 4 bytes, in network order
  std::uint16_t port = 0;

  bool operator==(const TcpEndpoint&) const = default;
  // "127.0.0.1:54321", "[::1]:54321".
  std::string ToString() const;
  // 127.0.0.0/8 or ::1.
  bool loopback() const;
};

// A connection as one of its two sockets sees it.
struct TcpConnection {
  TcpEndpoint local;
  TcpEndpoint remote;
  bool operator==(const TcpConnection&) const = default;
  // The same connection as the other socket sees it.
  TcpConnection Reversed() const { return {remote, local}; }
};

// `s`'s own end (getsockname) and its peer's (getpeername); nullopt when `s` is not a connected
// TCP socket.
std::optional<TcpEndpoint> LocalEndpoint(NativeSocket s);
std::optional<TcpEndpoint> RemoteEndpoint(NativeSocket s);
// Both, as `s` sees its connection.
std::optional<TcpConnection> ConnectionOf(NativeSocket s);

// An address of 4 bytes (IPv4) or 16 (IPv6), in network order, and a port.
TcpEndpoint EndpointFromBytes(const std::uint8_t* bytes, std::size_t size, std::uint16_t port);
// A numeric address ("127.0.0.2", "::1", without brackets) and a port; nullopt for anything else.
std::optional<TcpEndpoint> MakeEndpoint(std::string_view address, std::uint16_t port);

}  // namespace dxshim::socket_bridge
