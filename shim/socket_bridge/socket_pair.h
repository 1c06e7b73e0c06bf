// A connection that dxshim makes to itself: two connected stream sockets, one end for a gRPC
// server in this process (grpc_handoff.h), the other for a bridge that copies a client's bytes
// through it (a named pipe's, an AF_UNIX socket's). No listener outlives the call, so no other
// process can reach the server's end:
// - POSIX: socketpair(AF_UNIX), which has no address at all;
// - Windows: Winsock has no socketpair (and wine 8.0 no AF_UNIX), so a listener on 127.0.0.1
//   that lives only while this call connects to it (SO_EXCLUSIVEADDRUSE: nobody else can bind
//   its port). The accepted connection is taken only when its peer is exactly, address and port,
//   the local end of the socket this call connected: a TCP connection's four parts are unique
//   while that socket holds them. Anything else that connected in that moment is closed unread,
//   and `refused` is told who it was.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

struct SocketPair {
  Socket server_end;  // for the server (gRPC reads and writes it)
  Socket bridge_end;  // for the bridge
};

// Both ends blocking, as socket()/socketpair() make them (Windows: overlapped-capable, as
// Winsock's socket() makes them); nullopt with `error` naming the call that failed.
std::optional<SocketPair> MakeSocketPair(
    std::string& error, const std::function<void(const std::string&)>& refused = {});

// Gives a pair's server end to a gRPC server (HandToGrpcServer, bound to one server): the peer
// name gRPC gives calls over it, or "" with `error` set. The shape the bridges take it in, so
// that they need no gRPC of their own.
using HandToServer = std::function<std::string(Socket server_end, std::string& error)>;

}  // namespace dxshim::socket_bridge
