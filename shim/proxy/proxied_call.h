// One call accepted on dxshim's endpoint, whatever its method. It owns the gRPC objects of both
// legs (the caller's server context and stream, the runtime call's client context), copies the
// caller's metadata and deadline upstream, cancels the runtime call when the caller goes away,
// and deletes itself once no operation of either leg is outstanding. How messages travel is the
// job of its Relay, which the server's relay_for makes (relay_choice.h: a UnaryRelay for known
// unary CRI methods, a StreamRelay for anything else); this file knows none of them.
//
// All of a call's completions are handled by the one thread that drains the completion queue, so
// a call's state needs no lock; only Cancel() comes from another thread (shutdown), and gRPC's
// TryCancel is thread-safe.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "shim/proxy/call_registry.h"
#include "shim/proxy/call_tag.h"
#include "shim/proxy/interceptor.h"
#include "shim/proxy/proxy_observer.h"

namespace dxshim {

class ProxiedCall;
class Relay;
using LocalMethods =
    std::map<std::string, std::function<std::string()>, std::less<>>;  // local_method.h

// What all calls share; outlives every call.
struct ProxyShared {
  grpc::AsyncGenericService* service = nullptr;
  grpc::ServerCompletionQueue* cq = nullptr;
  grpc::GenericStub* runtime = nullptr;
  RequestInterceptor* interceptor = nullptr;  // may be null: nothing is intercepted
  // When set, a call whose peer (gRPC's peer string) it refuses is answered PERMISSION_DENIED
  // and never reaches the runtime. Windows: only the named pipe's own bridges are admitted.
  std::function<bool(std::string_view peer)> admit_peer;
  ProxyObserver* observer = nullptr;            // may be null: nothing is reported
  const LocalMethods* local_methods = nullptr;  // may be null: every method is relayed
  // Makes an accepted call's relay; `admitted` is false for a peer admit_peer refused.
  std::unique_ptr<Relay> (*relay_for)(ProxiedCall& call, bool admitted) = nullptr;
  CallRegistry registry;
  std::atomic<int> live_calls{0};  // accepted or waiting to be, so shutdown can wait for them
};

// How a call's messages travel between the two legs.
class Relay {
 public:
  explicit Relay(ProxiedCall& call) : call_(call) {}
  virtual ~Relay() = default;
  virtual void Begin() = 0;

 protected:
  ProxiedCall& call_;
};

class ProxiedCall final : public ActiveCall {
 public:
  // Waits for the next incoming call. Each accepted call posts the next acceptor itself.
  static void Accept(ProxyShared& shared);

  std::string_view method() const { return ctx_.method(); }
  void Cancel() override { ctx_.TryCancel(); }

  // For relays.
  // A tag for one operation of this call that runs `handler` on `relay` when it completes.
  template <typename R, void (R::*handler)(bool)>
  class Op final : public CallTag {
   public:
    Op(ProxiedCall& call, R* relay) : call_(call), relay_(relay) {}
    // Counts the operation as outstanding; pass the result to the gRPC operation.
    void* Start() {
      ++call_.outstanding_;
      return static_cast<CallTag*>(this);
    }
    void Complete(bool ok) override {
      (relay_->*handler)(ok);
      call_.OperationDone();
    }

   private:
    ProxiedCall& call_;
    R* relay_;
  };

  grpc::GenericServerAsyncReaderWriter& caller() { return caller_; }
  grpc::ClientContext& runtime_ctx() { return runtime_ctx_; }
  ProxyShared& shared() { return shared_; }
  void ForwardRuntimeInitialMetadata();
  void ForwardRuntimeTrailingMetadata();
  // Relays call this once, as they finish the caller's leg with `status`.
  void Answering(const grpc::Status& status) {
    if (shared_.observer != nullptr) {
      shared_.observer->CallAnswered(method(), status.error_code(),
                                     std::chrono::steady_clock::now() - accepted_at_);
    }
  }

 private:
  explicit ProxiedCall(ProxyShared& shared);
  ~ProxiedCall();
  void Accepted(bool ok);
  void CallerDone(bool ok);
  void OperationDone();

  ProxyShared& shared_;
  grpc::GenericServerContext ctx_;
  grpc::GenericServerAsyncReaderWriter caller_{&ctx_};
  grpc::ClientContext runtime_ctx_;
  std::unique_ptr<Relay> relay_;
  std::chrono::steady_clock::time_point accepted_at_;  // set only when there is an observer
  int outstanding_ = 0;
  bool registered_ = false;
  Op<ProxiedCall, &ProxiedCall::Accepted> accepted_{*this, this};
  Op<ProxiedCall, &ProxiedCall::CallerDone> caller_done_{*this, this};
};

}  // namespace dxshim
