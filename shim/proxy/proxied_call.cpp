#include "shim/proxy/proxied_call.h"

#include "shim/proxy/cri_methods.h"
#include "shim/proxy/metadata.h"

namespace dxshim {
void ProxiedCall::Accept(ProxyShared& shared) { new ProxiedCall(shared); }

ProxiedCall::ProxiedCall(ProxyShared& shared) : shared_(shared) {
  ++shared_.live_calls;
  // Must be requested before the call starts; its tag is delivered only for an accepted call.
  ctx_.AsyncNotifyWhenDone(&caller_done_);
  shared_.service->RequestCall(&ctx_, &caller_, shared_.cq, shared_.cq, accepted_.Start());
}

ProxiedCall::~ProxiedCall() {
  if (registered_) shared_.registry.Remove(this);
  --shared_.live_calls;
}

void ProxiedCall::Accepted(bool ok) {
  if (!ok) return;  // the server is shutting down; OperationDone() deletes this acceptor
  Accept(shared_);  // keep one acceptor waiting
  if (shared_.observer != nullptr) accepted_at_ = std::chrono::steady_clock::now();
  ++outstanding_;  // the done notification, now that it will come
  const bool admitted = !shared_.admit_peer || shared_.admit_peer(ctx_.peer());
  if (admitted) {
    if (IsLongLivedStream(ctx_.method())) {
      shared_.registry.Add(this);
      registered_ = true;
    }
    CopyCallerMetadata(ctx_.client_metadata(), runtime_ctx_);
    runtime_ctx_.set_deadline(ctx_.raw_deadline());
  }
  relay_ = shared_.relay_for(*this, admitted);
  relay_->Begin();
}

void ProxiedCall::CallerDone(bool /*ok*/) {
  // The caller's call is over; if it was cancelled (caller gone, deadline passed, shutdown), the
  // runtime call goes too.
  if (ctx_.IsCancelled()) runtime_ctx_.TryCancel();
}

void ProxiedCall::OperationDone() {
  if (--outstanding_ == 0) delete this;
}

void ProxiedCall::ForwardRuntimeInitialMetadata() {
  CopyRuntimeMetadata(runtime_ctx_.GetServerInitialMetadata(),
                      [this](const std::string& key, const std::string& value) {
                        ctx_.AddInitialMetadata(key, value);
                      });
}

void ProxiedCall::ForwardRuntimeTrailingMetadata() {
  CopyRuntimeMetadata(runtime_ctx_.GetServerTrailingMetadata(),
                      [this](const std::string& key, const std::string& value) {
                        ctx_.AddTrailingMetadata(key, value);
                      });
}

}  // namespace dxshim
