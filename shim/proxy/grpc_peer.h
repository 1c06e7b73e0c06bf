// gRPC's peer strings ("ipv4:127.0.0.1:54321", "ipv6:[::1]:54321"). On Windows dxshim's gRPC
// server listens on loopback behind its named pipe, and a call is admitted only when its peer is
// one of the pipe's own bridge connections; the port is what identifies that connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dxshim {

// The peer's port when the peer is a loopback TCP address (127.0.0.0/8 or ::1); nullopt for any
// other peer (a remote address, a unix socket, text gRPC did not write).
std::optional<std::uint16_t> LoopbackPeerPort(std::string_view peer);

}  // namespace dxshim
