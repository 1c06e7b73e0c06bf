// The POSIX part of ProxyServer's listening: a unix socket's path, umask and file.
#include <sys/stat.h>

#include "shim/proxy/proxy_server.h"
#include "shim/proxy/unix_socket.h"

namespace dxshim {

void ProxyServer::PrepareListen() {
  if (options_.listen.kind == Endpoint::Kind::kUnix) PrepareUnixSocketPath(options_.listen.address);
}

std::unique_ptr<grpc::Server> ProxyServer::BuildAndStart(grpc::ServerBuilder& builder) {
  const bool unix_socket = options_.listen.kind == Endpoint::Kind::kUnix;
  // The socket must never be reachable with looser permissions than configured, not even between
  // bind() and chmod(): create it under a restrictive umask.
  const mode_t previous_umask = unix_socket ? ::umask(0177) : 0;
  auto server = builder.BuildAndStart();
  if (unix_socket) ::umask(previous_umask);
  return server;
}

void ProxyServer::OwnSocketFile() {
  if (options_.listen.kind != Endpoint::Kind::kUnix) return;
  socket_file_ = std::make_shared<UnixSocketFile>(options_.listen.address,
                                                  static_cast<mode_t>(options_.socket_mode));
}

}  // namespace dxshim
