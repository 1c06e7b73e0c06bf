#include "shim/gpu/gpu_interceptor.h"

#include <google/protobuf/arena.h>
#include <spdlog/spdlog.h>

#include "runtime/v1/api.pb.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"
#include "shim/gpu/create_request_scan.h"

namespace dxshim {
namespace {

constexpr std::string_view kRunPodSandbox = "/runtime.v1.RuntimeService/RunPodSandbox";
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

GpuInterceptor::GpuInterceptor(devices::DeviceSnapshot& snapshot, Ledger& ledger,
                               TargetOptions target, RuntimeRecordPoller* poller,
                               SandboxHandlers* handlers, DecisionObserver observer)
    : snapshot_(snapshot),
      ledger_(ledger),
      target_(std::move(target)),
      poller_(poller),
      handlers_(target_.vm_runtime_handlers.empty() ? nullptr : handlers),
      observer_(std::move(observer)) {}

bool GpuInterceptor::Wants(std::string_view method) const {
  return method == kCreateContainerMethod || method == kStopPodSandbox ||
         method == kRemovePodSandbox || (handlers_ && method == kRunPodSandbox);
}

Interception GpuInterceptor::Intercept(std::string_view method, std::string_view request) {
  if (method == kCreateContainerMethod) return CreateContainer(request);
  if (method == kRunPodSandbox) return RunPodSandbox(request);
  // The sandbox calls are observed, never changed. A request that does not parse is the
  // runtime's to refuse.
  runtime::v1::RemovePodSandboxRequest r;  // StopPodSandboxRequest has the same field 1
  if (!r.ParseFromArray(request.data(), static_cast<int>(request.size()))) return {};
  const bool removed = method == kRemovePodSandbox;
  return ForwardThen([this, removed, id = r.pod_sandbox_id()] {
    ledger_.SandboxGone(id);
    if (removed && handlers_) handlers_->Removed(id);
    if (holds_changed_) holds_changed_();
  });
}

Interception GpuInterceptor::RunPodSandbox(std::string_view bytes) {
  runtime::v1::RunPodSandboxRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return {};
  auto i = Interception::Forward();  // observed, never changed
  i.on_result = [this, handler = request.runtime_handler()](const grpc::Status& status,
                                                            std::string_view response) {
    runtime::v1::RunPodSandboxResponse started;
    if (status.ok() && started.ParseFromArray(response.data(), static_cast<int>(response.size())) &&
        !started.pod_sandbox_id().empty()) {
      handlers_->Started(started.pod_sandbox_id(), handler);
    }
  };
  return i;
}

Decision GpuInterceptor::DecideNow(const runtime::v1::CreateContainerRequest& request,
                                   const std::optional<std::string>& handler) const {
  return Decide(
      request, *snapshot_.Current(), ledger_.policy(), [this] { return ledger_.View(); }, target_,
      handler);
}

Decision GpuInterceptor::DecideOnPresentFiles(const runtime::v1::CreateContainerRequest& request,
                                              std::uint64_t& reservation) {
  const auto handler =
      handlers_ ? handlers_->Find(request.pod_sandbox_id()) : std::optional<std::string>("");
  // Choosing reads the ledger and holds nothing; the ledger holds the choice only if it is still
  // good then: a resync (the poller's thread) may have rebuilt the ledger in between, and the
  // choice is made again from the ledger as it is then.
  constexpr int kChoices = 3;
  for (int choice = 1;; ++choice) {
    auto decision = DecideNow(request, handler);
    if (!decision.pass_through && !decision.plan.gone.empty()) {
      // A file the snapshot names has vanished: the driver changed (a driver update moves its
      // DriverStore folder). Re-read the devices now, not at the next refresh, and decide again
      // from them. Only on this path does the relay thread wait for the device source.
      spdlog::warn(
          "CreateContainer {} {}: {} runtime file(s) vanished from the host (first: {}): "
          "re-reading the devices",
          PodName(request.sandbox_config()), request.config().metadata().name(),
          decision.plan.gone.size(), decision.plan.gone.front());
      // At most once a second: a burst of pods on a driver that stays broken re-reads it once.
      const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
      auto last = last_reload_.load();
      if (now - last >= std::chrono::steady_clock::duration(std::chrono::seconds(1)).count() &&
          last_reload_.compare_exchange_strong(last, now)) {
        snapshot_.Reload();
      }
      decision = DecideNow(request, handler);
      if (!decision.pass_through && !decision.plan.gone.empty()) {
        const std::string files = JoinList(decision.plan.gone, ", ");
        throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kFilesGone,
                            AboutContainer(request) + "runtime file(s) " + files +
                                " were on this host and are gone, and the device source "
                                "(re-read within the last second) still names them: the GPU "
                                "driver is being changed or its DriverStore folder was moved; "
                                "not starting the container with part of its driver");
      }
    }
    if (decision.pass_through) return decision;
    if (const auto held =
            ledger_.Hold(decision.placed, request.pod_sandbox_id(),
                         PodName(request.sandbox_config()), request.config().metadata().name())) {
      reservation = *held;
      return decision;
    }
    if (choice == kChoices) {
      throw DecisionError(grpc::StatusCode::UNAVAILABLE, DecisionOutcome::kExhausted,
                          AboutContainer(request) + "the GPU ledger was rebuilt from the " +
                              "runtime while each of " + std::to_string(kChoices) +
                              " choices for it was made; retry shortly");
    }
  }
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
  std::uint64_t reservation = 0;
  try {
    decision = DecideOnPresentFiles(request, reservation);
  } catch (const DecisionError& e) {
    const bool stale = e.code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                       e.code() == grpc::StatusCode::UNAVAILABLE;
    if (stale && poller_) poller_->Kick();
    Report(e.outcome());
    return Interception::Reject(grpc::Status(e.code(), e.what()));
  }
  if (decision.pass_through) {
    if (decision.notable) {
      spdlog::info("CreateContainer {} {}: unchanged: {}", PodName(request.sandbox_config()),
                   request.config().metadata().name(), decision.why);
    }
    Report(DecisionOutcome::kPassedThrough);
    return Interception::Forward();
  }
  ApplyPlan(decision.plan, *request.mutable_config());
  std::string rewritten;
  request.SerializeToString(&rewritten);
  // What the container's dxshim.io/explanation says: the choice, the files and the environment.
  spdlog::info("CreateContainer {} {}: {}", PodName(request.sandbox_config()),
               request.config().metadata().name(),
               decision.plan.annotations.at(keys::kExplanationAnnotation));
  for (const auto& note : decision.plan.notes) spdlog::info("  {}", note);
  for (const auto& line : decision.placed.considered) spdlog::debug("  {}", line);
  auto i = Interception::Replace(std::move(rewritten));
  i.on_result = [this, id = reservation](const grpc::Status& status, std::string_view response) {
    runtime::v1::CreateContainerResponse created;
    if (status.ok() && created.ParseFromArray(response.data(), static_cast<int>(response.size())) &&
        !created.container_id().empty()) {
      ledger_.Commit(id);
      if (holds_changed_) holds_changed_();
      Report(DecisionOutcome::kInjected);
    } else {
      ledger_.Release(id);  // nothing was created: nothing stays allocated
      Report(DecisionOutcome::kRuntimeFailure);
    }
  };
  return i;
}

}  // namespace dxshim
