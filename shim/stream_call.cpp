#include "shim/stream_call.h"

#include <spdlog/spdlog.h>

namespace dxshim {

// Lifetime: besides the caller side's reference (ProxiedCall), the runtime side holds one until
// RuntimeDone. The runtime call is kept open by gRPC "holds": one for the request direction while
// caller messages may still come, and one per response message until the caller has taken it, so
// that no runtime operation is ever started on a finished call. The caller side cannot finish
// before RuntimeDone calls Finish, so caller operations started from runtime reactions are always
// on a live call.

StreamCall::StreamCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared)
    : ProxiedCall(ctx, shared) {
  {
    std::lock_guard lock(mu_);
    caller_read_pending_ = true;
    request_side_open_ = true;
  }
  // The runtime call opens at once, so methods where the runtime speaks first work as well.
  Ref();
  shared_.runtime->PrepareBidiStreamingCall(&runtime_ctx_, std::string(ctx_->method()),
                                            grpc::StubOptions(), &runtime_);
  runtime_.AddHold();  // the request direction; released by CloseRequestSide()
  runtime_.StartCall();
  StartRead(&from_caller_);
}

void StreamCall::OnReadDone(bool ok) {
  {
    std::lock_guard lock(mu_);
    caller_read_pending_ = false;
    // The runtime has finished: whatever the caller still sends has nowhere to go.
    if (!request_side_open_) return;
  }
  if (!ok) {  // the caller half-closed (or went away): so does the request direction
    runtime_.StartWritesDone();
    CloseRequestSide();
    return;
  }
  runtime_.StartWrite(&from_caller_);
}

void StreamCall::CloseRequestSide() {
  {
    std::lock_guard lock(mu_);
    if (!request_side_open_) return;
    request_side_open_ = false;
  }
  runtime_.RemoveHold();
}

void StreamCall::RuntimeWriteDone(bool ok) {
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

void StreamCall::RuntimeInitialMetadata(bool ok) {
  if (!ok) {  // the call failed before the runtime answered; only the status remains
    RuntimeReadDone(false);
    return;
  }
  ForwardRuntimeInitialMetadata();
  StartSendInitialMetadata();
  // Responses are read only now, so the caller's headers always go out before any message.
  runtime_.StartRead(&from_runtime_);
}

void StreamCall::RuntimeReadDone(bool ok) {
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
  runtime_.AddHold();  // until the caller has taken this message
  StartWrite(&from_runtime_);
}

void StreamCall::OnWriteDone(bool ok) {
  if (ok) {
    runtime_.StartRead(&from_runtime_);
  } else {
    runtime_ctx_.TryCancel();  // the caller is gone
  }
  runtime_.RemoveHold();
}

void StreamCall::RuntimeDone(const grpc::Status& status) {
  ForwardRuntimeTrailingMetadata();
  if (!status.ok() && spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} -> {} {}", ctx_->method(), static_cast<int>(status.error_code()),
                  status.error_message());
  }
  Finish(status);
  Unref();
}

}  // namespace dxshim
