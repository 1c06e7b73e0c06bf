// The relay for streaming methods and for methods dxshim does not know: messages are relayed as
// opaque byte buffers in both directions, one in flight per direction, so flow control reaches
// both ends. Server-, client- and bidi-streaming calls, and unary calls of unknown methods, all
// work through it. Runs on the completion-queue thread only: no locks.
#pragma once

#include <grpcpp/generic/generic_stub.h>

#include <memory>

#include "shim/proxy/proxied_call.h"

namespace dxshim {

class StreamRelay final : public Relay {
 public:
  explicit StreamRelay(ProxiedCall& call) : Relay(call) {}
  void Begin() override;

 private:
  // Completions.
  void RuntimeStarted(bool ok);
  void RuntimeMetadata(bool ok);
  void RuntimeRead(bool ok);
  void RuntimeWritten(bool ok);
  void RuntimeFinished(bool ok);
  void CallerRead(bool ok);
  void CallerWritten(bool ok);
  void CallerFinished(bool /*ok*/) {}

  void ReadRuntime();
  void ReadCaller();
  void PumpToCaller();
  void MaybeFinishRuntime();
  void MaybeFinishCaller();

  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> runtime_;
  grpc::ByteBuffer from_caller_;
  grpc::ByteBuffer from_runtime_;
  grpc::Status status_;

  // Runtime -> caller.
  bool runtime_reading_ = false;
  bool runtime_reads_done_ = false;
  bool message_for_caller_ = false;  // from_runtime_ holds a message not yet written
  bool caller_writing_ = false;
  // Caller -> runtime.
  bool caller_reading_ = false;
  bool runtime_writing_ = false;
  bool runtime_writes_closed_ = false;  // WritesDone sent, or the runtime stopped taking writes
  // Endings.
  bool runtime_finishing_ = false;
  bool runtime_finished_ = false;
  bool caller_finishing_ = false;

  using Self = StreamRelay;
  ProxiedCall::Op<Self, &Self::RuntimeStarted> runtime_started_{call_, this};
  ProxiedCall::Op<Self, &Self::RuntimeMetadata> runtime_metadata_{call_, this};
  ProxiedCall::Op<Self, &Self::RuntimeRead> runtime_read_{call_, this};
  ProxiedCall::Op<Self, &Self::RuntimeWritten> runtime_written_{call_, this};
  ProxiedCall::Op<Self, &Self::RuntimeFinished> runtime_finished_op_{call_, this};
  ProxiedCall::Op<Self, &Self::CallerRead> caller_read_{call_, this};
  ProxiedCall::Op<Self, &Self::CallerWritten> caller_written_{call_, this};
  ProxiedCall::Op<Self, &Self::CallerFinished> caller_finished_{call_, this};
};

}  // namespace dxshim
