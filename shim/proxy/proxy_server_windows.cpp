// The Windows part of ProxyServer's listening: TCP only (named pipes are bridged to it by
// shim/windows), so a unix socket is refused.
#include <stdexcept>

#include "shim/proxy/proxy_server.h"

namespace dxshim {

void ProxyServer::PrepareListen() {
  if (options_.listen.kind == Endpoint::Kind::kUnix) {
    throw std::runtime_error("unix sockets are not served on Windows");
  }
}

std::unique_ptr<grpc::Server> ProxyServer::BuildAndStart(grpc::ServerBuilder& builder) {
  return builder.BuildAndStart();
}

void ProxyServer::OwnSocketFile() {}

}  // namespace dxshim
