// What every proxied call shares, whichever way its messages are relayed: the caller's metadata
// and deadline go upstream, cancellation follows the caller, the runtime's metadata comes back,
// and the call is registered so that shutdown can find it.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <mutex>

#include "shim/call_registry.h"
#include "shim/interceptor.h"

namespace dxshim {

// What all calls share; outlives every call.
struct ProxyShared {
  grpc::GenericStub* runtime = nullptr;
  RequestInterceptor* interceptor = nullptr;  // may be null: nothing is intercepted
  CallRegistry registry;
};

class ProxiedCall : public grpc::ServerGenericBidiReactor, public ActiveCall {
 public:
  // ActiveCall.
  std::string_view method() const override { return ctx_->method(); }
  bool TryRef() override;
  void Unref() override;
  void Cancel() override;

  // Caller side: a caller that goes away (or runs out of time) takes the runtime call with it.
  void OnCancel() override { runtime_ctx_.TryCancel(); }
  void OnDone() override;

 protected:
  ProxiedCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared);
  ~ProxiedCall() override;
  // One reference for the caller side exists from the start; the runtime side takes its own.
  void Ref() { refs_.fetch_add(1); }
  void ForwardRuntimeInitialMetadata();
  void ForwardRuntimeTrailingMetadata();

  grpc::GenericCallbackServerContext* const ctx_;
  ProxyShared& shared_;
  grpc::ClientContext runtime_ctx_;

 private:
  std::atomic<int> refs_{1};
  // Cancel() may come from the registry while gRPC finishes the call; after OnDone the server
  // context is gone. Recursive, in case gRPC runs OnDone inside TryCancel on this thread.
  std::recursive_mutex cancel_mu_;
  bool caller_done_ = false;
};

}  // namespace dxshim
