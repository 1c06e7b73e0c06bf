#include "shim/socket_bridge/grpc_peer.h"

#include <charconv>

namespace dxshim {

std::optional<socket_bridge::TcpEndpoint> ParseGrpcPeer(std::string_view peer) {
  std::string_view host;
  std::string_view port;
  if (peer.starts_with("ipv4:")) {
    peer.remove_prefix(5);
    const auto colon = peer.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = peer.substr(0, colon);
    port = peer.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return std::nullopt;
  } else if (peer.starts_with("ipv6:")) {
    peer.remove_prefix(5);
    // gRPC writes the brackets either plain or URI-escaped, depending on its version.
    for (const auto& [open, close] :
         {std::pair<std::string_view, std::string_view>{"[", "]:"}, {"%5B", "%5D:"}}) {
      if (!peer.starts_with(open)) continue;
      const auto end = peer.find(close);
      if (end == std::string_view::npos) return std::nullopt;
      host = peer.substr(open.size(), end - open.size());
      port = peer.substr(end + close.size());
    }
    if (host.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || port.size() > 5 || ec != std::errc() || end != port.data() + port.size() ||
      value == 0 || value > 65535) {
    return std::nullopt;
  }
  // inet_pton takes no zone ("%25eth0") and no other escape: such a peer is refused.
  return socket_bridge::MakeEndpoint(host, static_cast<std::uint16_t>(value));
}

}  // namespace dxshim
