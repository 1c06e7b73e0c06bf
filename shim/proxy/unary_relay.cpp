#include "shim/proxy/unary_relay.h"

#include <spdlog/spdlog.h>

#include "shim/proxy/byte_buffer.h"
#include "shim/proxy/status_code_name.h"

namespace dxshim {

void UnaryRelay::Begin() { call_.caller().Read(&request_, read_.Start()); }

void UnaryRelay::RequestRead(bool ok) {
  if (!ok) {  // the caller went away, or half-closed without sending the request
    FinishCaller(
        grpc::Status(grpc::StatusCode::INTERNAL,
                     "dxshim: unary call " + std::string(call_.method()) + " had no request"));
    return;
  }
  if (!intercept_) {
    CallRuntime(request_);  // the caller's bytes, untouched
    return;
  }
  Interception decision;
  try {
    decision = call_.shared().interceptor->Intercept(call_.method(), ToBytes(request_));
  } catch (const std::exception& e) {
    decision = Interception::Reject(
        grpc::Status(grpc::StatusCode::INTERNAL, std::string("dxshim: ") + e.what()));
  }
  switch (decision.action) {
    case Interception::Action::kReject:
      // Nothing reaches the runtime, so there is nothing to commit or release: no on_result.
      spdlog::info("{} rejected: {}", call_.method(), decision.status.error_message());
      FinishCaller(decision.status);
      return;
    case Interception::Action::kForward:
      on_result_ = std::move(decision.on_result);
      CallRuntime(request_);
      return;
    case Interception::Action::kReplace:
      on_result_ = std::move(decision.on_result);
      rewritten_ = FromBytes(decision.request);
      CallRuntime(rewritten_);
      return;
  }
}

void UnaryRelay::CallRuntime(const grpc::ByteBuffer& request) {
  auto& shared = call_.shared();
  runtime_ = shared.runtime->PrepareUnaryCall(&call_.runtime_ctx(), std::string(call_.method()),
                                              request, shared.cq);
  runtime_->StartCall();
  runtime_->Finish(&response_, &status_, answered_.Start());
}

void UnaryRelay::RuntimeAnswered(bool /*ok: always true for Finish*/) {
  if (on_result_) {
    try {
      on_result_(status_, status_.ok() ? ToBytes(response_) : std::string());
    } catch (const std::exception& e) {
      spdlog::error("{}: result handler failed: {}", call_.method(), e.what());
    }
  }
  call_.ForwardRuntimeInitialMetadata();
  call_.ForwardRuntimeTrailingMetadata();
  if (status_.ok()) {
    call_.Answering(status_);
    call_.caller().WriteAndFinish(response_, grpc::WriteOptions(), status_, finished_.Start());
  } else {
    FinishCaller(status_);
  }
}

void UnaryRelay::FinishCaller(const grpc::Status& status) {
  if (!status.ok() && spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} -> {} {}", call_.method(), StatusCodeName(status.error_code()),
                  status.error_message());
  }
  call_.Answering(status);
  call_.caller().Finish(status, finished_.Start());
}

}  // namespace dxshim
