#include "shim/proxy/relay_choice.h"

#include "shim/proxy/cri_methods.h"
#include "shim/proxy/local_method.h"
#include "shim/proxy/stream_relay.h"
#include "shim/proxy/unary_relay.h"

namespace dxshim {
namespace {

// Answers a call the endpoint does not admit, without reading it or calling the runtime.
class RefusedRelay final : public Relay {
 public:
  using Relay::Relay;
  void Begin() override {
    const grpc::Status refused(grpc::StatusCode::PERMISSION_DENIED,
                               "dxshim: calls are accepted only through dxshim's own endpoint");
    call_.Answering(refused);
    call_.caller().Finish(refused, finished_.Start());
  }

 private:
  void Finished(bool /*ok*/) {}
  ProxiedCall::Op<RefusedRelay, &RefusedRelay::Finished> finished_{call_, this};
};

}  // namespace

std::unique_ptr<Relay> RelayFor(ProxiedCall& call, bool admitted) {
  if (!admitted) return std::make_unique<RefusedRelay>(call);
  const auto method = call.method();
  if (const auto* local = call.shared().local_methods) {
    if (const auto it = local->find(method); it != local->end())
      return LocalRelay(call, it->second);
  }
  if (!IsUnaryCriMethod(method)) return std::make_unique<StreamRelay>(call);
  const auto* interceptor = call.shared().interceptor;
  return std::make_unique<UnaryRelay>(call, interceptor != nullptr && interceptor->Wants(method));
}

}  // namespace dxshim
