#include "shim/runtime_record/runtime_record_poller.h"

#include <grpcpp/client_context.h>
#include <spdlog/spdlog.h>

#include "shim/proxy/runtime_channel.h"

namespace dxshim {

RuntimeRecordPoller::RuntimeRecordPoller(const Endpoint& runtime,
                                         std::chrono::milliseconds interval, Consumer consumer,
                                         std::string name)
    : consumer_(std::move(consumer)),
      interval_(interval),
      name_(std::move(name)),
      stub_(runtime::v1::RuntimeService::NewStub(
          DialRuntime(runtime, std::chrono::milliseconds(1000)))) {}

RuntimeRecordPoller::~RuntimeRecordPoller() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // A listing waiting for a runtime that is down must not hold up dxshim's exit.
    if (listing_) listing_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

grpc::Status RuntimeRecordPoller::ListRuntime(std::chrono::milliseconds timeout,
                                              bool wait_for_runtime,
                                              runtime::v1::ListPodSandboxResponse& sandboxes,
                                              runtime::v1::ListContainersResponse& containers) {
  // Both listings share one deadline, and the destructor cancels whichever is in flight. What
  // passes through dxshim between or during them (a commit, a stopped sandbox) is in the
  // ledger's journal, so their order does not matter; what does not pass through (a sandbox
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
  auto status = list([&](grpc::ClientContext& ctx) {
    return stub_->ListPodSandbox(&ctx, runtime::v1::ListPodSandboxRequest(), &sandboxes);
  });
  if (!status.ok()) return status;
  return list([&](grpc::ClientContext& ctx) {
    return stub_->ListContainers(&ctx, runtime::v1::ListContainersRequest(), &containers);
  });
}

bool RuntimeRecordPoller::SyncOnce(std::chrono::milliseconds timeout, bool wait_for_runtime) {
  const auto started = std::chrono::steady_clock::now();
  const auto report = [&](bool ok) {
    if (timer_) timer_(ok, std::chrono::steady_clock::now() - started);
    return ok;
  };
  if (consumer_.starting) consumer_.starting();
  runtime::v1::ListPodSandboxResponse sandboxes;
  runtime::v1::ListContainersResponse containers;
  if (const auto status = ListRuntime(timeout, wait_for_runtime, sandboxes, containers);
      !status.ok()) {
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
  Listing listing;
  listing.record = ReadRuntimeRecord(sandboxes, containers);
  listing.sandbox_handlers = ReadSandboxHandlers(sandboxes);
  listing.sandboxes = sandboxes.items_size();
  listing.containers = containers.containers_size();
  const auto holding = consumer_.listed(listing);
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    first = !listed_;
    listed_ = true;
  }
  if (first) {
    spdlog::info("{}: {} pod(s) hold GPUs ({} sandboxes, {} containers listed)", name_, holding,
                 listing.sandboxes, listing.containers);
  } else {
    spdlog::debug("{}: resynced, {} pod(s) hold GPUs", name_, holding);
  }
  return report(true);
}

void RuntimeRecordPoller::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    bool ok = listed_;
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

void RuntimeRecordPoller::Kick() {
  {
    std::lock_guard lock(mutex_);
    kicked_ = true;
  }
  cv_.notify_all();
}

}  // namespace dxshim
