// A proxied call of a streaming or unknown method: a server reactor facing the caller (kubelet)
// joined to a client reactor facing the runtime. Messages are relayed as opaque byte buffers in
// both directions, one in flight per direction (so flow control reaches both ends); metadata,
// deadline, cancellation, status and trailers cross over unchanged. Server-, client- and
// bidi-streaming calls, and unary calls of methods dxshim does not know, all take this path.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include <atomic>
#include <mutex>

#include "shim/proxied_call.h"

namespace dxshim {

class StreamCall final : public ProxiedCall {
 public:
  StreamCall(grpc::GenericCallbackServerContext* ctx, ProxyShared& shared);

  // Caller side (grpc::ServerGenericBidiReactor).
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;

 private:
  class RuntimeLeg final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit RuntimeLeg(StreamCall* call) : call_(call) {}
    void OnReadInitialMetadataDone(bool ok) override { call_->RuntimeInitialMetadata(ok); }
    void OnReadDone(bool ok) override { call_->RuntimeReadDone(ok); }
    void OnWriteDone(bool ok) override { call_->RuntimeWriteDone(ok); }
    void OnDone(const grpc::Status& status) override { call_->RuntimeDone(status); }

   private:
    StreamCall* call_;
  };

  void StartRuntimeCall();
  void CloseRequestSide();
  void RuntimeInitialMetadata(bool ok);
  void RuntimeReadDone(bool ok);
  void RuntimeWriteDone(bool ok);
  void RuntimeDone(const grpc::Status& status);

  RuntimeLeg runtime_{this};
  grpc::ByteBuffer from_caller_;   // request message read from the caller
  grpc::ByteBuffer from_runtime_;  // response message read from the runtime

  std::mutex mu_;                   // guards the flags below; never held while a reaction can run
  bool request_side_open_ = false;  // we hold the runtime call open to relay caller messages
  bool caller_read_pending_ = false;
  bool runtime_reads_ended_ = false;
};

}  // namespace dxshim
