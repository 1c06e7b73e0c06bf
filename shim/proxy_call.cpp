#include "shim/proxy_call.h"

#include <spdlog/spdlog.h>

#include "shim/byte_buffer.h"
#include "shim/metadata.h"

namespace dxshim {

// Lifetime: the call holds one reference for the caller side (dropped in OnDone) and one for the
// runtime side once that call starts (dropped in RuntimeDone). The runtime call is kept open by
// gRPC "holds": one for the request direction while caller messages may still come, and one per
// response message until the caller has taken it, so that no runtime operation is started on a
// finished call. The caller side cannot finish before RuntimeDone calls Finish (or a rejection
// does), so caller operations started from runtime reactions are always on a live call.

ProxyCall::ProxyCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared)
    : ctx_(ctx),
      shared_(shared),
      intercepted_(shared.interceptor != nullptr && ctx->method() == kCreateContainerMethod) {
  shared_.registry.Add(this);
  CopyCallerMetadata(ctx_->client_metadata(), runtime_ctx_);
  runtime_ctx_.set_deadline(ctx_->raw_deadline());
  {
    std::lock_guard lock(mu_);
    caller_read_pending_ = true;
  }
  // An intercepted call waits for its request before calling the runtime; every other call is
  // opened at once, so methods where the runtime speaks first work as well.
  if (!intercepted_) StartRuntimeCall();
  StartRead(&from_caller_);
}

ProxyCall::~ProxyCall() { shared_.registry.Remove(this); }

bool ProxyCall::TryRef() {
  int refs = refs_.load();
  while (refs > 0) {
    if (refs_.compare_exchange_weak(refs, refs + 1)) return true;
  }
  return false;
}

void ProxyCall::Unref() {
  if (refs_.fetch_sub(1) == 1) delete this;
}

void ProxyCall::Cancel() {
  std::lock_guard lock(cancel_mu_);
  if (!caller_done_) ctx_->TryCancel();
}

void ProxyCall::StartRuntimeCall() {
  {
    std::lock_guard lock(mu_);
    runtime_started_ = true;
    request_side_open_ = true;
  }
  refs_.fetch_add(1);
  shared_.runtime->PrepareBidiStreamingCall(&runtime_ctx_, std::string(ctx_->method()),
                                            grpc::StubOptions(), &runtime_);
  runtime_.AddHold();  // the request direction; released by CloseRequestSide()
  runtime_.StartCall();
}

void ProxyCall::OnReadDone(bool ok) {
  bool runtime_started = false;
  {
    std::lock_guard lock(mu_);
    caller_read_pending_ = false;
    runtime_started = runtime_started_;
    // The runtime has finished: whatever the caller still sends has nowhere to go.
    if (runtime_started && !request_side_open_) return;
  }
  if (!runtime_started) {  // an intercepted call, waiting for its request
    if (ok) {
      Intercept();
      return;
    }
    StartRuntimeCall();  // the caller half-closed without a request: let the runtime answer
  }
  if (!ok) {  // the caller half-closed (or went away): so does the request direction
    runtime_.StartWritesDone();
    CloseRequestSide();
    return;
  }
  runtime_.StartWrite(&from_caller_);
}

void ProxyCall::Intercept() {
  Interception decision;
  try {
    decision = shared_.interceptor->Intercept(ctx_->method(), ToBytes(from_caller_));
  } catch (const std::exception& e) {
    decision = Interception::Reject(
        grpc::Status(grpc::StatusCode::INTERNAL, std::string("dxshim: ") + e.what()));
  }
  switch (decision.action) {
    case Interception::Action::kReject:
      spdlog::info("{} rejected: {}", ctx_->method(), decision.status.error_message());
      Finish(decision.status);
      return;
    case Interception::Action::kForward:
      on_result_ = std::move(decision.on_result);
      StartRuntimeCall();
      runtime_.StartWrite(&from_caller_);
      return;
    case Interception::Action::kReplace:
      on_result_ = std::move(decision.on_result);
      rewritten_ = FromBytes(decision.request);
      StartRuntimeCall();
      runtime_.StartWrite(&rewritten_);
      return;
  }
}

void ProxyCall::CloseRequestSide() {
  {
    std::lock_guard lock(mu_);
    if (!request_side_open_) return;
    request_side_open_ = false;
  }
  runtime_.RemoveHold();
}

void ProxyCall::RuntimeWriteDone(bool ok) {
  if (!ok) {  // the runtime no longer takes messages; its status follows
    CloseRequestSide();
    return;
  }
  bool read_more = false;
  {
    std::lock_guard lock(mu_);
    read_more = !runtime_reads_ended_;
    if (read_more) caller_read_pending_ = true;
  }
  if (read_more) {
    StartRead(&from_caller_);
  } else {
    CloseRequestSide();
  }
}

void ProxyCall::RuntimeInitialMetadata(bool ok) {
  if (!ok) {  // the call failed before the runtime answered; only the status remains
    RuntimeReadDone(false);
    return;
  }
  CopyRuntimeMetadata(runtime_ctx_.GetServerInitialMetadata(),
                      [this](std::string key, std::string value) {
                        ctx_->AddInitialMetadata(std::move(key), std::move(value));
                      });
  StartSendInitialMetadata();
  // Responses are read only now, so the caller's headers always go out before any message.
  runtime_.StartRead(&from_runtime_);
}

void ProxyCall::RuntimeReadDone(bool ok) {
  if (!ok) {  // the runtime sent its last message
    bool release = false;
    {
      std::lock_guard lock(mu_);
      runtime_reads_ended_ = true;
      // A caller read is waiting for messages that can no longer be relayed: let the runtime
      // call complete now rather than when the caller half-closes.
      release = request_side_open_ && caller_read_pending_;
      if (release) request_side_open_ = false;
    }
    if (release) runtime_.RemoveHold();
    return;
  }
  if (on_result_) last_response_ = ToBytes(from_runtime_);
  runtime_.AddHold();  // until the caller has taken this message
  StartWrite(&from_runtime_);
}

void ProxyCall::OnWriteDone(bool ok) {
  if (ok) {
    runtime_.StartRead(&from_runtime_);
  } else {
    runtime_ctx_.TryCancel();  // the caller is gone
  }
  runtime_.RemoveHold();
}

void ProxyCall::RuntimeDone(const grpc::Status& status) {
  if (on_result_) {
    try {
      on_result_(status, last_response_);
    } catch (const std::exception& e) {
      spdlog::error("{}: result handler failed: {}", ctx_->method(), e.what());
    }
  }
  CopyRuntimeMetadata(runtime_ctx_.GetServerTrailingMetadata(),
                      [this](std::string key, std::string value) {
                        ctx_->AddTrailingMetadata(std::move(key), std::move(value));
                      });
  if (!status.ok() && spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} -> {} {}", ctx_->method(), static_cast<int>(status.error_code()),
                  status.error_message());
  }
  Finish(status);
  Unref();
}

void ProxyCall::OnCancel() { runtime_ctx_.TryCancel(); }

void ProxyCall::OnDone() {
  {
    std::lock_guard lock(cancel_mu_);
    caller_done_ = true;
  }
  Unref();
}

}  // namespace dxshim
