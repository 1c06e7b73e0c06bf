#include "shim/socket_bridge/grpc_handoff.h"

namespace dxshim::socket_bridge {

void HandoffDoor::Open(grpc::Server& server) {
  std::lock_guard lock(mutex_);
  server_ = &server;
}

void HandoffDoor::Close() {
  std::lock_guard lock(mutex_);
  server_ = nullptr;
}

std::string HandoffDoor::Hand(Socket connection, std::string& error) {
  std::lock_guard lock(mutex_);
  if (server_ == nullptr) {
    error = "the gRPC server is not serving";
    return {};
  }
  return HandToGrpcServer(*server_, std::move(connection), error);
}

}  // namespace dxshim::socket_bridge
