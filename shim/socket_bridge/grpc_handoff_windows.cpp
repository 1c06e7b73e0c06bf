// What grpc_server_add_channel_from_fd (gRPC 1.51.1,
// src/core/ext/transport/chttp2/server/chttp2_server.cc) does on POSIX, with the Windows TCP
// endpoint (src/core/lib/iomgr/tcp_windows.h, socket_windows.h). These are gRPC's internal
// headers: the build takes them from the very source dxshim.exe's gRPC is built from
// (DXSHIM_GRPC_SOURCE, Debian's gRPC 1.51.1 source package), so they match the library.
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <grpc/support/port_platform.h>
// gRPC's internal headers: outside this project, so in angle brackets.
#include <src/core/ext/transport/chttp2/transport/chttp2_transport.h>
#include <src/core/lib/iomgr/exec_ctx.h>
#include <src/core/lib/iomgr/socket_windows.h>
#include <src/core/lib/iomgr/tcp_windows.h>
#include <src/core/lib/surface/server.h>

#include <atomic>

#include "shim/socket_bridge/grpc_handoff.h"

namespace dxshim::socket_bridge {

std::string HandToGrpcServer(grpc::Server& server, Socket connection, std::string& error) {
  // As gRPC's Windows listener leaves the sockets it accepts: non-blocking (its endpoint's
  // overlapped calls expect it), without Nagle (a call's small frames go out at once).
  const BOOL no_delay = TRUE;
  if (!grpc_tcp_set_non_block(connection.get()).ok() ||
      setsockopt(connection.get(), IPPROTO_TCP, TCP_NODELAY,
                 reinterpret_cast<const char*>(&no_delay), sizeof no_delay) != 0) {
    error = "cannot prepare a handed connection for gRPC: " + LastSocketError();
    return {};
  }
  // A name of our own, never reused in this process (a socket handle is).
  static std::atomic<unsigned long long> handed{0};
  const std::string peer = "handed:" + std::to_string(++handed);
  grpc_core::ExecCtx exec_ctx;
  grpc_core::Server* core_server = grpc_core::Server::FromC(server.c_server());
  const grpc_core::ChannelArgs args = core_server->channel_args();
  grpc_endpoint* endpoint =
      grpc_tcp_create(grpc_winsocket_create(connection.release(), peer.c_str()), peer);
  grpc_transport* transport = grpc_create_chttp2_transport(args, endpoint, false);
  const grpc_error_handle setup = core_server->SetupTransport(transport, nullptr, args, nullptr);
  if (!setup.ok()) {
    grpc_transport_destroy(transport);  // closes the socket
    error = "gRPC did not take a handed connection: " + std::string(setup.message());
    return {};
  }
  for (grpc_pollset* pollset : core_server->pollsets()) {
    grpc_endpoint_add_to_pollset(endpoint, pollset);
  }
  grpc_chttp2_transport_start_reading(transport, nullptr, nullptr, nullptr);
  return peer;
}

}  // namespace dxshim::socket_bridge
