// gRPC's peer strings ("ipv4:127.0.0.1:54321", "ipv6:[::1]:54321"), parsed without gRPC. On
// Windows dxshim's gRPC servers listen on loopback behind a bridge (the named pipe of the CRI
// endpoint, the AF_UNIX socket of the device plugin), and a call is admitted only when its peer
// is one of that bridge's own connections; the port is what identifies the connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dxshim {

// The peer's port when the peer is a loopback TCP address (127.0.0.0/8 or ::1); nullopt for any
// other peer (a remote address, a unix socket, text gRPC did not write).
std::optional<std::uint16_t> LoopbackPeerPort(std::string_view peer);

}  // namespace dxshim
