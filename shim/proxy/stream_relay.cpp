#include "shim/proxy/stream_relay.h"

#include <spdlog/spdlog.h>

#include "shim/proxy/status_code_name.h"

namespace dxshim {

void StreamRelay::Begin() {
  // The runtime call opens at once, so methods where the runtime speaks first work as well.
  auto& shared = call_.shared();
  runtime_ =
      shared.runtime->PrepareCall(&call_.runtime_ctx(), std::string(call_.method()), shared.cq);
  runtime_->StartCall(runtime_started_.Start());
}

void StreamRelay::RuntimeStarted(bool ok) {
  if (!ok) {  // the call could not even start; only its status remains
    runtime_reads_done_ = true;
    runtime_writes_closed_ = true;
    MaybeFinishRuntime();
    return;
  }
  runtime_->ReadInitialMetadata(runtime_metadata_.Start());
  ReadCaller();
}

void StreamRelay::RuntimeMetadata(bool ok) {
  if (!ok) {  // the call failed before the runtime answered
    runtime_reads_done_ = true;
    MaybeFinishRuntime();
    return;
  }
  call_.ForwardRuntimeInitialMetadata();
  call_.caller().SendInitialMetadata(caller_written_.Start());
  caller_writing_ = true;
  ReadRuntime();
}

void StreamRelay::ReadRuntime() {
  runtime_reading_ = true;
  runtime_->Read(&from_runtime_, runtime_read_.Start());
}

void StreamRelay::RuntimeRead(bool ok) {
  runtime_reading_ = false;
  if (!ok) {  // the runtime sent its last message
    runtime_reads_done_ = true;
    MaybeFinishRuntime();
    return;
  }
  message_for_caller_ = true;
  PumpToCaller();
}

void StreamRelay::PumpToCaller() {
  if (caller_writing_ || !message_for_caller_) return;
  message_for_caller_ = false;
  caller_writing_ = true;
  call_.caller().Write(from_runtime_, caller_written_.Start());
}

void StreamRelay::CallerWritten(bool ok) {
  caller_writing_ = false;
  if (!ok) {  // the caller is gone: so is the runtime call
    call_.runtime_ctx().TryCancel();
    message_for_caller_ = false;
  }
  PumpToCaller();
  // Read the next message once the previous one is out (or the headers, for the first).
  if (ok && !caller_writing_ && !runtime_reading_ && !runtime_reads_done_ && !message_for_caller_) {
    ReadRuntime();
  }
  MaybeFinishCaller();
}

void StreamRelay::ReadCaller() {
  caller_reading_ = true;
  call_.caller().Read(&from_caller_, caller_read_.Start());
}

void StreamRelay::CallerRead(bool ok) {
  caller_reading_ = false;
  if (runtime_writes_closed_ || runtime_finishing_) return;  // nowhere to send it any more
  runtime_writing_ = true;
  if (ok) {
    runtime_->Write(from_caller_, runtime_written_.Start());
  } else {  // the caller half-closed (or went away): so does the request direction
    runtime_writes_closed_ = true;
    runtime_->WritesDone(runtime_written_.Start());
  }
}

void StreamRelay::RuntimeWritten(bool ok) {
  runtime_writing_ = false;
  if (!ok) runtime_writes_closed_ = true;  // the runtime stopped taking messages
  if (!runtime_writes_closed_ && !runtime_reads_done_) ReadCaller();
  MaybeFinishRuntime();
}

void StreamRelay::MaybeFinishRuntime() {
  // Asking for the status is allowed once nothing more will be read or written.
  if (!runtime_reads_done_ || runtime_writing_ || runtime_finishing_) return;
  runtime_finishing_ = true;
  runtime_->Finish(&status_, runtime_finished_op_.Start());
}

void StreamRelay::RuntimeFinished(bool /*ok*/) {
  runtime_finished_ = true;
  MaybeFinishCaller();
}

void StreamRelay::MaybeFinishCaller() {
  if (!runtime_finished_ || caller_writing_ || caller_finishing_) return;
  caller_finishing_ = true;
  call_.ForwardRuntimeTrailingMetadata();
  if (!status_.ok() && spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} -> {} {}", call_.method(), StatusCodeName(status_.error_code()),
                  status_.error_message());
  }
  call_.Answering(status_);
  call_.caller().Finish(status_, caller_finished_.Start());
}

}  // namespace dxshim
