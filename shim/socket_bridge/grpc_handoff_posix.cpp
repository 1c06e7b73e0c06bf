#include <fcntl.h>
#include <grpcpp/server_posix.h>

#include "shim/socket_bridge/grpc_handoff.h"

namespace dxshim::socket_bridge {

std::string HandToGrpcServer(grpc::Server& server, Socket connection, std::string& error) {
  // gRPC's POSIX endpoint expects a non-blocking descriptor (its own listener makes them so) and
  // names the connection's peer "fd:N" (grpc_server_add_channel_from_fd).
  if (!SetNonBlocking(connection.get())) {
    error = "cannot make a handed connection non-blocking: " + LastSocketError();
    return {};
  }
  const int fd = connection.release();
  grpc::AddInsecureChannelFromFd(&server, fd);
  return "fd:" + std::to_string(fd);
}

}  // namespace dxshim::socket_bridge
