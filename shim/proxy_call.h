// One proxied gRPC call: a server reactor facing the caller (kubelet) joined to a client reactor
// facing the runtime. Messages are relayed as opaque byte buffers in both directions, one in flight
// per direction (so flow control reaches both ends); metadata, deadline, cancellation, status and
// trailers cross over unchanged. Unary, server-, client- and bidi-streaming calls all take this
// one path, so methods dxshim has never heard of work too.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <mutex>
#include <string>

#include "shim/call_registry.h"
#include "shim/interceptor.h"

namespace dxshim {

// What all calls share; outlives every call.
struct ProxyShared {
  grpc::GenericStub* runtime = nullptr;
  RequestInterceptor* interceptor = nullptr;  // may be null: nothing is intercepted
  CallRegistry registry;
};

class ProxyCall final : public grpc::ServerGenericBidiReactor, public ActiveCall {
 public:
  ProxyCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared);

  // Caller side (grpc::ServerGenericBidiReactor).
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // ActiveCall.
  std::string_view method() const override { return ctx_->method(); }
  bool TryRef() override;
  void Unref() override;
  void Cancel() override;

 private:
  class RuntimeLeg final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit RuntimeLeg(ProxyCall* call) : call_(call) {}
    void OnReadInitialMetadataDone(bool ok) override { call_->RuntimeInitialMetadata(ok); }
    void OnReadDone(bool ok) override { call_->RuntimeReadDone(ok); }
    void OnWriteDone(bool ok) override { call_->RuntimeWriteDone(ok); }
    void OnDone(const grpc::Status& status) override { call_->RuntimeDone(status); }

   private:
    ProxyCall* call_;
  };

  ~ProxyCall();
  void StartRuntimeCall();
  void RelayRequest(const grpc::ByteBuffer& request);
  void Intercept();
  void CloseRequestSide();
  void RuntimeInitialMetadata(bool ok);
  void RuntimeReadDone(bool ok);
  void RuntimeWriteDone(bool ok);
  void RuntimeDone(const grpc::Status& status);

  grpc::GenericCallbackServerContext* const ctx_;
  ProxyShared& shared_;
  const bool intercepted_;
  grpc::ClientContext runtime_ctx_;
  RuntimeLeg runtime_{this};
  grpc::ByteBuffer from_caller_;    // request message read from the caller
  grpc::ByteBuffer rewritten_;      // request produced by the interceptor
  grpc::ByteBuffer from_runtime_;   // response message read from the runtime
  std::function<void(const grpc::Status&, std::string_view)> on_result_;
  std::string last_response_;       // kept only when on_result_ wants it

  std::atomic<int> refs_{1};
  std::mutex mu_;  // guards the flags below; never held while a reaction can run
  bool runtime_started_ = false;
  bool request_side_open_ = false;  // we hold the runtime call open to relay caller messages
  bool caller_read_pending_ = false;
  bool runtime_reads_ended_ = false;
  // Cancel() may come from the registry while gRPC finishes the call; after OnDone the server
  // context is gone. Recursive, in case gRPC runs OnDone inside TryCancel on this thread.
  std::recursive_mutex cancel_mu_;
  bool caller_done_ = false;
};

// The service that turns every incoming call, whatever its method, into a ProxyCall.
class ProxyService final : public grpc::CallbackGenericService {
 public:
  explicit ProxyService(ProxyShared& shared) : shared_(shared) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new ProxyCall(ctx, shared_);
  }

 private:
  ProxyShared& shared_;
};

}  // namespace dxshim
