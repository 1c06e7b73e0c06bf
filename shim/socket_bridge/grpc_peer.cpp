#include "shim/socket_bridge/grpc_peer.h"

namespace dxshim {

std::optional<std::uint16_t> LoopbackPeerPort(std::string_view peer) {
  std::string_view host;
  std::string_view port;
  if (peer.starts_with("ipv4:")) {
    peer.remove_prefix(5);
    const auto colon = peer.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = peer.substr(0, colon);
    port = peer.substr(colon + 1);
    if (!host.starts_with("127.")) return std::nullopt;
  } else if (peer.starts_with("ipv6:")) {
    peer.remove_prefix(5);
    // gRPC writes the bracket either plain or URI-escaped, depending on its version.
    for (const std::string_view loopback : {"[::1]:", "%5B::1%5D:"}) {
      if (peer.starts_with(loopback)) port = peer.substr(loopback.size());
    }
  }
  if (port.empty() || port.size() > 5) return std::nullopt;
  std::uint32_t value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

}  // namespace dxshim
