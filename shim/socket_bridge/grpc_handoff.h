// Hands the server end of a connection dxshim made to itself (socket_pair.h) to a gRPC server in
// this process, as gRPC's own listener hands it the connections it accepts. dxshim's gRPC servers
// behind a bridge (the CRI server behind kubelet's named pipe, the device plugin's behind its
// AF_UNIX socket) listen on no port at all: gRPC reads only bytes that came through a front the
// operating system guards (the pipe's security descriptor, the socket file's folder), never a
// byte from a local process that connected around it.
// - POSIX: grpc::AddInsecureChannelFromFd (grpcpp/server_posix.h).
// - Windows: gRPC 1.51 has no such call there (GPR_SUPPORT_CHANNELS_FROM_FD is POSIX only), so
//   grpc_handoff_windows.cpp does what its POSIX twin, grpc_server_add_channel_from_fd
//   (src/core/ext/transport/chttp2/server/chttp2_server.cc), does, with the Windows endpoint:
//   gRPC's internal headers, from the source the Windows build is made of (DXSHIM_GRPC_SOURCE).
// The one part of socket_bridge that knows gRPC: a library of its own (dxshim_grpc_handoff).
#pragma once

#include <grpcpp/server.h>

#include <mutex>
#include <string>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

// Gives `connection` (connected, blocking or not) to `server` (built and started; it needs no
// listening port). gRPC owns the socket from here and closes it when the connection ends.
// Returns the peer name gRPC gives calls over it (grpc::ServerContext::peer()): "fd:N" on POSIX,
// "handed:N" on Windows; "" with `error` set when the socket cannot be prepared (or, on Windows,
// gRPC refuses the connection). On POSIX gRPC's own call reports no refusal (it logs it and
// closes the descriptor): the name is returned, and the bridge's client sees its connection end.
std::string HandToGrpcServer(grpc::Server& server, Socket connection, std::string& error);

// The way handed connections reach one server: open once it is up, closed before it shuts down,
// under one lock, so that no connection is handed to it while or after it shuts down (a bridge
// whose client comes then sees its connection end).
class HandoffDoor {
 public:
  void Open(grpc::Server& server);
  // Returns once no Hand runs; every later one fails.
  void Close();
  // HandToGrpcServer to the open server; "" with `error` set when the door is closed.
  std::string Hand(Socket connection, std::string& error);

 private:
  std::mutex mutex_;
  grpc::Server* server_ = nullptr;
};

}  // namespace dxshim::socket_bridge
