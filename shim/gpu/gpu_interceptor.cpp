#include "shim/gpu/gpu_interceptor.h"

#include <google/protobuf/arena.h>
#include <spdlog/spdlog.h>

#include "runtime/v1/api.pb.h"
#include "shim/gpu/create_request_scan.h"

namespace dxshim {
namespace {

constexpr std::string_view kStopPodSandbox = "/runtime.v1.RuntimeService/StopPodSandbox";
constexpr std::string_view kRemovePodSandbox = "/runtime.v1.RuntimeService/RemovePodSandbox";

// Frees `release` once the runtime confirms the call succeeded.
Interception ForwardThen(std::function<void()> release) {
  auto i = Interception::Forward();
  i.on_result = [release = std::move(release)](const grpc::Status& status, std::string_view) {
    if (status.ok()) release();
  };
  return i;
}

}  // namespace

GpuInterceptor::GpuInterceptor(const devices::DeviceSnapshot& snapshot,
                               devices::Allocator& allocator, TargetOptions target,
                               LedgerSync* sync, DecisionObserver observer)
    : snapshot_(snapshot),
      allocator_(allocator),
      target_(std::move(target)),
      sync_(sync),
      observer_(std::move(observer)) {}

bool GpuInterceptor::Wants(std::string_view method) const {
  return method == kCreateContainerMethod || method == kStopPodSandbox ||
         method == kRemovePodSandbox;
}

Interception GpuInterceptor::Intercept(std::string_view method, std::string_view request) {
  if (method == kCreateContainerMethod) return CreateContainer(request);
  // The sandbox calls are observed, never changed. A request that does not parse is the
  // runtime's to refuse.
  runtime::v1::RemovePodSandboxRequest r;  // StopPodSandboxRequest has the same field 1
  if (!r.ParseFromArray(request.data(), static_cast<int>(request.size()))) return {};
  return ForwardThen([this, id = r.pod_sandbox_id()] { allocator_.SandboxGone(id); });
}

Interception GpuInterceptor::CreateContainer(std::string_view bytes) {
  if (!MayNeedDevices(bytes)) {  // not even decoded
    Report(DecisionOutcome::kPassedThrough);
    return Interception::Forward();
  }
  // One arena for the whole message: a kubelet request is a few hundred small strings, and
  // allocating each of them was half of this path's time (perf, create_container_bench).
  alignas(8) char first_block[16 * 1024];
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = first_block;
  arena_options.initial_block_size = sizeof(first_block);
  google::protobuf::Arena arena(arena_options);
  auto& request =
      *google::protobuf::Arena::CreateMessage<runtime::v1::CreateContainerRequest>(&arena);
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    Report(DecisionOutcome::kPassedThrough);
    return Interception::Forward();  // the runtime answers malformed requests itself
  }
  Decision decision;
  try {
    decision = Decide(request, *snapshot_.Current(), allocator_, target_);
  } catch (const DecisionError& e) {
    if (e.code() == grpc::StatusCode::RESOURCE_EXHAUSTED && sync_) sync_->Kick();
    Report(e.outcome());
    return Interception::Reject(grpc::Status(e.code(), e.what()));
  }
  if (decision.pass_through) {
    Report(DecisionOutcome::kPassedThrough);
    return Interception::Forward();
  }
  ApplyPlan(decision.plan, *request.mutable_config());
  std::string rewritten;
  request.SerializeToString(&rewritten);
  spdlog::info("CreateContainer {} {}: {}", PodName(request.sandbox_config()),
               request.config().metadata().name(), decision.why);
  for (const auto& note : decision.plan.notes) spdlog::info("  {}", note);
  for (const auto& line : decision.reservation.considered) spdlog::debug("  {}", line);
  auto i = Interception::Replace(std::move(rewritten));
  i.on_result = [this, id = decision.reservation.id](const grpc::Status& status,
                                                     std::string_view response) {
    runtime::v1::CreateContainerResponse created;
    if (status.ok() && created.ParseFromArray(response.data(), static_cast<int>(response.size())) &&
        !created.container_id().empty()) {
      allocator_.Commit(id);
      Report(DecisionOutcome::kInjected);
    } else {
      allocator_.Release(id);  // nothing was created: nothing stays allocated
      Report(DecisionOutcome::kRuntimeFailure);
    }
  };
  return i;
}

}  // namespace dxshim
