#include "shim/unary_call.h"

#include <spdlog/spdlog.h>

#include "shim/byte_buffer.h"

namespace dxshim {

UnaryCall::UnaryCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared, bool intercept)
    : ProxiedCall(ctx, shared), intercept_(intercept) {
  StartRead(&request_);
}

void UnaryCall::OnReadDone(bool ok) {
  if (!ok) {  // the caller went away, or half-closed without sending the request
    Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                        "dxshim: unary call " + std::string(ctx_->method()) + " had no request"));
    return;
  }
  if (!intercept_) {
    CallRuntime(&request_);  // the caller's bytes, untouched
    return;
  }
  Interception decision;
  try {
    decision = shared_.interceptor->Intercept(ctx_->method(), ToBytes(request_));
  } catch (const std::exception& e) {
    decision = Interception::Reject(
        grpc::Status(grpc::StatusCode::INTERNAL, std::string("dxshim: ") + e.what()));
  }
  on_result_ = std::move(decision.on_result);
  switch (decision.action) {
    case Interception::Action::kReject:
      spdlog::info("{} rejected: {}", ctx_->method(), decision.status.error_message());
      on_result_ = nullptr;  // nothing reached the runtime: nothing to commit or release
      Finish(decision.status);
      return;
    case Interception::Action::kForward:
      CallRuntime(&request_);
      return;
    case Interception::Action::kReplace:
      rewritten_ = FromBytes(decision.request);
      CallRuntime(&rewritten_);
      return;
  }
}

void UnaryCall::CallRuntime(const grpc::ByteBuffer* request) {
  Ref();  // the runtime side, until RuntimeDone
  shared_.runtime->UnaryCall(&runtime_ctx_, std::string(ctx_->method()), grpc::StubOptions(),
                             request, &response_,
                             [this](const grpc::Status& status) { RuntimeDone(status); });
}

void UnaryCall::RuntimeDone(const grpc::Status& status) {
  if (on_result_) {
    try {
      on_result_(status, status.ok() ? ToBytes(response_) : std::string());
    } catch (const std::exception& e) {
      spdlog::error("{}: result handler failed: {}", ctx_->method(), e.what());
    }
  }
  ForwardRuntimeInitialMetadata();
  ForwardRuntimeTrailingMetadata();
  if (status.ok()) {
    StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
  } else {
    if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("{} -> {} {}", ctx_->method(), static_cast<int>(status.error_code()),
                    status.error_message());
    }
    Finish(status);
  }
  Unref();
}

}  // namespace dxshim
