#include "shim/proxy/local_method.h"

#include "shim/proxy/byte_buffer.h"

namespace dxshim {
namespace {

class LocalMethodRelay final : public Relay {
 public:
  LocalMethodRelay(ProxiedCall& call, std::function<std::string()> answer)
      : Relay(call), answer_(std::move(answer)) {}
  void Begin() override { call_.caller().Read(&request_, read_.Start()); }

 private:
  void RequestRead(bool ok) {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                          "dxshim: unary call " + std::string(call_.method()) + " had no request"));
      return;
    }
    try {
      response_ = FromBytes(answer_());
    } catch (const std::exception& e) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL, std::string("dxshim: ") + e.what()));
      return;
    }
    call_.Answering(grpc::Status::OK);
    call_.caller().WriteAndFinish(response_, grpc::WriteOptions(), grpc::Status::OK,
                                  finished_.Start());
  }
  void Finish(const grpc::Status& status) {
    call_.Answering(status);
    call_.caller().Finish(status, finished_.Start());
  }
  void Finished(bool /*ok*/) {}

  std::function<std::string()> answer_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  ProxiedCall::Op<LocalMethodRelay, &LocalMethodRelay::RequestRead> read_{call_, this};
  ProxiedCall::Op<LocalMethodRelay, &LocalMethodRelay::Finished> finished_{call_, this};
};

}  // namespace

std::unique_ptr<Relay> LocalRelay(ProxiedCall& call, const std::function<std::string()>& answer) {
  return std::make_unique<LocalMethodRelay>(call, answer);
}

}  // namespace dxshim
