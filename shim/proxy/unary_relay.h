// The relay for methods known to be unary (every runtime.v1 method but the streaming ones): one
// request read from the caller, one runtime call made with gRPC's unary call (a single batch for
// metadata, message and half-close), and one batch back with metadata, message and status. This
// is the path kubelet's calls take, and the only place where a request can be intercepted.
#pragma once

#include <grpcpp/generic/generic_stub.h>

#include <functional>
#include <memory>

#include "shim/proxy/proxied_call.h"

namespace dxshim {

class UnaryRelay final : public Relay {
 public:
  UnaryRelay(ProxiedCall& call, bool intercept) : Relay(call), intercept_(intercept) {}
  void Begin() override;

 private:
  void RequestRead(bool ok);
  void RuntimeAnswered(bool ok);
  void Finished(bool /*ok*/) {}
  void CallRuntime(const grpc::ByteBuffer& request);
  void FinishCaller(const grpc::Status& status);

  const bool intercept_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer rewritten_;  // the interceptor's replacement request
  grpc::ByteBuffer response_;
  grpc::Status status_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> runtime_;
  std::function<void(const grpc::Status&, std::string_view)> on_result_;
  ProxiedCall::Op<UnaryRelay, &UnaryRelay::RequestRead> read_{call_, this};
  ProxiedCall::Op<UnaryRelay, &UnaryRelay::RuntimeAnswered> answered_{call_, this};
  ProxiedCall::Op<UnaryRelay, &UnaryRelay::Finished> finished_{call_, this};
};

}  // namespace dxshim
