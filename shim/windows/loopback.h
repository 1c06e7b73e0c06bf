// Windows only, no gRPC: loopback TCP helpers for the named-pipe bridges (the runtime forwarder's
// port, which any local process could connect to, takes only this process's connections). They
// are the socket bridge's (shim/socket_bridge), which the device plugin's AF_UNIX bridge uses on
// both platforms.
#pragma once

#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::windows {

// Winsock for the lifetime of this object: the bridges' sockets need it before gRPC, which
// starts its own, exists.
using WinsockSession = socket_bridge::NetworkSession;

// A socket connected to 127.0.0.1:`port` (overlapped, as Winsock's socket() makes them), or
// INVALID_SOCKET.
inline SOCKET ConnectLoopback(int port) {
  std::string error;
  return socket_bridge::ConnectLoopback(static_cast<std::uint16_t>(port), error).release();
}

using socket_bridge::PeerIsThisProcess;

}  // namespace dxshim::windows
