#include "shim/ledger_sync.h"

#include <grpcpp/client_context.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "shim/injection.h"
#include "shim/runtime_channel.h"

namespace dxshim {

std::vector<devices::RecordedContainer> RecordedContainers(
    const runtime::v1::ListContainersResponse& response) {
  std::vector<devices::RecordedContainer> out;
  for (const auto& c : response.containers()) {
    // An exited container holds nothing; one in an unknown state may still run, so it keeps its
    // share (freeing it could double-book the GPU).
    if (c.state() == runtime::v1::CONTAINER_EXITED) continue;
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
    out.push_back(std::move(r));
  }
  return out;
}

LedgerSync::LedgerSync(const Endpoint& runtime, devices::Allocator& allocator,
                       std::chrono::milliseconds interval)
    : allocator_(allocator),
      interval_(interval),
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
  allocator_.BeginResync();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  ctx.set_wait_for_ready(wait_for_runtime);
  runtime::v1::ListContainersRequest request;
  runtime::v1::ListContainersResponse response;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    listing_ = &ctx;
  }
  const auto status = stub_->ListContainers(&ctx, request, &response);
  {
    std::lock_guard lock(mutex_);
    listing_ = nullptr;
  }
  if (!status.ok()) {
    if (!failing_) {
      spdlog::warn(
          "ledger: cannot list the runtime's containers (GPU requests wait until it "
          "can): {}",
          status.error_message());
    }
    failing_ = true;
    return false;
  }
  if (failing_) spdlog::info("ledger: the runtime's containers can be listed again");
  failing_ = false;
  const auto recorded = RecordedContainers(response);
  const bool first = !allocator_.synced();
  allocator_.FinishResync(recorded);
  if (first) {
    spdlog::info("ledger: {} container(s) hold GPUs ({} listed)", recorded.size(),
                 response.containers_size());
  }
  return true;
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
