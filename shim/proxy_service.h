// The service behind dxshim's endpoint: every incoming call, whatever its method, becomes a
// UnaryCall (known unary CRI methods) or a StreamCall (everything else).
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include "shim/proxied_call.h"

namespace dxshim {

class ProxyService final : public grpc::CallbackGenericService {
 public:
  explicit ProxyService(ProxyShared& shared) : shared_(shared) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  ProxyShared& shared_;
};

}  // namespace dxshim
