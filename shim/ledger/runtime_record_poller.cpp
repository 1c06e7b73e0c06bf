#include "shim/gpu/ledger_sync.h"

#include <grpcpp/client_context.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "devices/allocation/device_request.h"
#include "shim/gpu/injection.h"
#include "shim/proxy/runtime_channel.h"

namespace dxshim {

devices::RuntimeRecord ReadRuntimeRecord(const runtime::v1::ListPodSandboxResponse& sandboxes,
                                         const runtime::v1::ListContainersResponse& containers) {
  devices::RuntimeRecord record;
  for (const auto& s : sandboxes.items()) {
    // Only a sandbox the runtime says is not ready has stopped; a state this proto does not
    // know is taken as ready (freeing its devices could double-book them).
    if (s.state() != runtime::v1::SANDBOX_NOTREADY) record.ready_sandboxes.insert(s.id());
  }
  for (const auto& c : containers.containers()) {
    const auto devices = c.labels().find(kDevicesLabel);
    if (devices == c.labels().end() || devices->second.empty()) continue;
    devices::RecordedContainer r;
    r.container_id = c.id();
    r.sandbox_id = c.pod_sandbox_id();
    std::stringstream ids(devices->second);
    for (std::string id; std::getline(ids, id, ',');) {
      if (!id.empty()) r.device_ids.push_back(id);
    }
    const auto sharing = c.labels().find(kSharingLabel);
    r.exclusive = sharing != c.labels().end() && sharing->second == "exclusive";
    // One in an unknown state may still run.
    r.exited = c.state() == runtime::v1::CONTAINER_EXITED;
    const auto slots = c.annotations().find(std::string(devices::kPluginSlotsAnnotation));
    if (slots != c.annotations().end()) {
      std::stringstream list(slots->second);
      for (std::string slot; std::getline(list, slot, ',');) {
        if (!slot.empty()) r.plugin_slots.push_back(slot);
      }
    }
    record.containers.push_back(std::move(r));
  }
  return record;
}

std::map<std::string, std::string> ReadSandboxHandlers(
    const runtime::v1::ListPodSandboxResponse& sandboxes) {
  std::map<std::string, std::string> handlers;
  for (const auto& s : sandboxes.items()) handlers.emplace(s.id(), s.runtime_handler());
  return handlers;
}

LedgerSync::LedgerSync(const Endpoint& runtime, devices::Allocator& allocator,
                       std::chrono::milliseconds interval, Observer observer, std::string name)
    : allocator_(allocator),
      interval_(interval),
      observer_(std::move(observer)),
      name_(std::move(name)),
      stub_(runtime::v1::RuntimeService::NewStub(
          DialRuntime(runtime, std::chrono::milliseconds(1000)))) {}

LedgerSync::~LedgerSync() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // A listing waiting for a runtime that is down must not hold up dxshim's exit.
    if (listing_) listing_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LedgerSync::SyncOnce(std::chrono::milliseconds timeout, bool wait_for_runtime) {
  const auto started = std::chrono::steady_clock::now();
  const auto report = [&](bool ok) {
    if (timer_) timer_(ok, std::chrono::steady_clock::now() - started);
    return ok;
  };
  allocator_.BeginResync();
  const auto handlers_mark = handlers_ ? handlers_->Mark() : 0;
  // Both listings share one deadline, and the destructor cancels whichever is in flight. What
  // passes through dxshim between or during them (a commit, a stopped sandbox) is in the
  // allocator's journal, so their order does not matter; what does not pass through (a sandbox
  // stopped directly in the runtime) is seen by the next resync.
  const auto deadline = std::chrono::system_clock::now() + timeout;
  const auto list = [&](const auto& call) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    ctx.set_wait_for_ready(wait_for_runtime);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return grpc::Status(grpc::StatusCode::CANCELLED, "dxshim is stopping");
      listing_ = &ctx;
    }
    auto status = call(ctx);
    std::lock_guard lock(mutex_);
    listing_ = nullptr;
    return status;
  };
  runtime::v1::ListPodSandboxResponse sandboxes;
  runtime::v1::ListContainersResponse containers;
  auto status = list([&](grpc::ClientContext& ctx) {
    return stub_->ListPodSandbox(&ctx, runtime::v1::ListPodSandboxRequest(), &sandboxes);
  });
  if (status.ok()) {
    status = list([&](grpc::ClientContext& ctx) {
      return stub_->ListContainers(&ctx, runtime::v1::ListContainersRequest(), &containers);
    });
  }
  if (!status.ok()) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;  // cancelled at exit: nothing to report
    }
    if (!failing_) {
      spdlog::warn(
          "{}: cannot list the runtime's sandboxes and containers (GPU requests wait until "
          "it can): {}",
          name_, status.error_message());
    }
    failing_ = true;
    return report(false);
  }
  if (failing_)
    spdlog::info("{}: the runtime's sandboxes and containers can be listed again", name_);
  failing_ = false;
  const bool first = !allocator_.synced();
  const auto record = ReadRuntimeRecord(sandboxes, containers);
  const auto outcome = allocator_.FinishResync(record);
  if (handlers_) handlers_->Reconcile(ReadSandboxHandlers(sandboxes), handlers_mark);
  if (observer_) observer_(record);
  for (const auto& freed : outcome.freed) {
    std::string ids;
    for (const auto& id : freed.device_ids) ids += (ids.empty() ? "" : ",") + id;
    spdlog::info("{}: sandbox {} is stopped or gone: GPU(s) {} free", name_, freed.sandbox_id, ids);
  }
  if (first) {
    spdlog::info("{}: {} pod(s) hold GPUs ({} sandboxes, {} containers listed)", name_,
                 outcome.holding, sandboxes.items_size(), containers.containers_size());
  } else {
    spdlog::debug("{}: resynced, {} pod(s) hold GPUs", name_, outcome.holding);
  }
  return report(true);
}

void LedgerSync::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    bool ok = allocator_.synced();
    while (!stopping_) {
      const auto wait = ok ? interval_ : std::chrono::milliseconds(1000);
      cv_.wait_for(lock, wait, [this] { return stopping_ || kicked_; });
      if (stopping_) break;
      kicked_ = false;
      lock.unlock();
      ok = SyncOnce(std::chrono::milliseconds(5000));
      lock.lock();
    }
  });
}

void LedgerSync::Kick() {
  {
    std::lock_guard lock(mutex_);
    kicked_ = true;
  }
  cv_.notify_all();
}

}  // namespace dxshim
