// gRPC's peer strings ("ipv4:127.0.0.1:54321", "ipv6:[::1]:54321", "ipv6:%5B::1%5D:54321"),
// parsed without gRPC into the endpoint they name. On Windows dxshim's gRPC servers listen on
// loopback behind a bridge (the named pipe of the CRI endpoint, the AF_UNIX socket of the device
// plugin), and a call is admitted only when its peer is exactly one of that bridge's own
// connections (own_connections.h): the whole address and the port, never the port alone.
#pragma once

#include <optional>
#include <string_view>

#include "shim/socket_bridge/tcp_endpoint.h"

namespace dxshim {

// The endpoint a TCP peer string names; nullopt for any other peer (a unix socket, text gRPC did
// not write, a port of 0 or over 65535).
std::optional<socket_bridge::TcpEndpoint> ParseGrpcPeer(std::string_view peer);

}  // namespace dxshim
