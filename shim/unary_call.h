// A proxied call of a method known to be unary (every runtime.v1 method but the streaming ones):
// one request read from the caller, one runtime call made with gRPC's unary call (a single batch
// for metadata, message and half-close), and one batch back for metadata, message and status.
// This is the path kubelet's calls take, and the only place where a request can be intercepted.
#pragma once

#include <functional>
#include <string>

#include "shim/proxied_call.h"

namespace dxshim {

class UnaryCall final : public ProxiedCall {
 public:
  UnaryCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared, bool intercept);

  void OnReadDone(bool ok) override;

 private:
  void CallRuntime(const grpc::ByteBuffer* request);
  void RuntimeDone(const grpc::Status& status);

  const bool intercept_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer rewritten_;  // the interceptor's replacement request
  grpc::ByteBuffer response_;
  std::function<void(const grpc::Status&, std::string_view)> on_result_;
};

}  // namespace dxshim
