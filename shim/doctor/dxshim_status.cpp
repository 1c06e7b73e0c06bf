#include "shim/doctor/dxshim_status.h"

#include <grpcpp/grpcpp.h>

#include "dxshim/v1/node_status.grpc.pb.h"
#include "runtime/v1/api.grpc.pb.h"
#include "shim/proxy/runtime_channel.h"
#include "shim/proxy/status_code_name.h"

namespace dxshim::doctor {
namespace {

std::unique_ptr<grpc::ClientContext> Until(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  context->set_wait_for_ready(false);
  return context;
}

}  // namespace

std::optional<install::CriCallers> AskCriCallers(const Endpoint& dial,
                                                 std::chrono::milliseconds timeout,
                                                 std::string& error) {
  const auto stub = v1::NodeStatus::NewStub(DialRuntime(dial, std::chrono::milliseconds(1000)));
  v1::CriCallersResponse response;
  const auto status = stub->CriCallers(Until(timeout).get(), {}, &response);
  if (!status.ok()) {
    error = std::string(StatusCodeName(status.error_code())) + ": " + status.error_message();
    return std::nullopt;
  }
  install::CriCallers answer;
  answer.server_pid = response.server_pid();
  for (const auto& c : response.callers()) {
    answer.callers.push_back(
        {c.pid(), c.program(), c.calls(), c.first_call_unix_ms(), c.last_call_unix_ms()});
  }
  return answer;
}

bool CriVersionAnswers(const Endpoint& dial, std::chrono::milliseconds timeout) {
  const auto stub =
      runtime::v1::RuntimeService::NewStub(DialRuntime(dial, std::chrono::milliseconds(1000)));
  runtime::v1::VersionRequest request;
  request.set_version("v1");
  runtime::v1::VersionResponse response;
  return stub->Version(Until(timeout).get(), request, &response).ok();
}

}  // namespace dxshim::doctor
