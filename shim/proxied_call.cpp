#include "shim/proxied_call.h"

#include "shim/metadata.h"

namespace dxshim {

ProxiedCall::ProxiedCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared)
    : ctx_(ctx), shared_(shared) {
  shared_.registry.Add(this);
  CopyCallerMetadata(ctx_->client_metadata(), runtime_ctx_);
  runtime_ctx_.set_deadline(ctx_->raw_deadline());
}

ProxiedCall::~ProxiedCall() { shared_.registry.Remove(this); }

bool ProxiedCall::TryRef() {
  int refs = refs_.load();
  while (refs > 0) {
    if (refs_.compare_exchange_weak(refs, refs + 1)) return true;
  }
  return false;
}

void ProxiedCall::Unref() {
  if (refs_.fetch_sub(1) == 1) delete this;
}

void ProxiedCall::Cancel() {
  std::lock_guard lock(cancel_mu_);
  if (!caller_done_) ctx_->TryCancel();
}

void ProxiedCall::OnDone() {
  {
    std::lock_guard lock(cancel_mu_);
    caller_done_ = true;
  }
  Unref();
}

void ProxiedCall::ForwardRuntimeInitialMetadata() {
  CopyRuntimeMetadata(runtime_ctx_.GetServerInitialMetadata(),
                      [this](const std::string& key, const std::string& value) {
                        ctx_->AddInitialMetadata(key, value);
                      });
}

void ProxiedCall::ForwardRuntimeTrailingMetadata() {
  CopyRuntimeMetadata(runtime_ctx_.GetServerTrailingMetadata(),
                      [this](const std::string& key, const std::string& value) {
                        ctx_->AddTrailingMetadata(key, value);
                      });
}

}  // namespace dxshim
