// The interceptor `dxshim serve` installs: CreateContainer gets its devices (decided from the
// current device snapshot), and what passes through keeps the ledger current: a failed
// CreateContainer releases its reservation, a successful one commits it to the pod, a stopped or
// removed pod sandbox frees its share. Container stops and removals change nothing: the pod
// keeps its devices across container restarts (crash loops, init containers). With VM runtime
// handlers configured, RunPodSandbox is observed too, to learn each sandbox's handler.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "devices/device_source.h"
#include "shim/gpu/container_decision.h"
#include "shim/gpu/injection.h"
#include "shim/gpu/sandbox_handlers.h"
#include "shim/ledger/ledger.h"
#include "shim/proxy/interceptor.h"
#include "shim/runtime_record/runtime_record_poller.h"

namespace dxshim {

class GpuInterceptor : public RequestInterceptor {
 public:
  // Told what became of each CreateContainer (on the relay thread: it must only count).
  using DecisionObserver = std::function<void(DecisionOutcome)>;
  // `poller` may be null (no kick on exhaustion). `handlers` may be null when the target has no VM
  // runtime handlers. The snapshot is re-read at once when a runtime file it names has vanished.
  GpuInterceptor(devices::DeviceSnapshot& snapshot, Ledger& ledger, TargetOptions target,
                 RuntimeRecordPoller* poller, SandboxHandlers* handlers,
                 DecisionObserver observer = {});

  // Called (on the relay thread: it must not block) each time who holds GPUs changed through
  // dxshim: a committed CreateContainer, a stopped or removed pod sandbox. Before serving.
  void set_on_holds_changed(std::function<void()> changed) { holds_changed_ = std::move(changed); }

  bool Wants(std::string_view method) const override;
  Interception Intercept(std::string_view method, std::string_view request) override;

 private:
  Interception CreateContainer(std::string_view request);
  Interception RunPodSandbox(std::string_view request);
  // Decide() on the current snapshot and ledger, held in the ledger (its id into `reservation`).
  // When runtime files it names have vanished, re-reads the devices once and decides again, and
  // fails naming the files if they are still gone; when the ledger changed before the choice was
  // held (a resync), chooses again.
  Decision DecideOnPresentFiles(const runtime::v1::CreateContainerRequest& request,
                                std::uint64_t& reservation);
  // Decide over the current device snapshot and ledger: it holds nothing.
  Decision DecideNow(const runtime::v1::CreateContainerRequest& request,
                     const std::optional<std::string>& handler) const;
  void Report(DecisionOutcome outcome) const {
    if (observer_) observer_(outcome);
  }

  devices::DeviceSnapshot& snapshot_;
  Ledger& ledger_;
  TargetOptions target_;
  RuntimeRecordPoller* poller_;
  SandboxHandlers* handlers_;
  // steady_clock ticks of the last re-read of the devices for vanished files.
  std::atomic<std::chrono::steady_clock::rep> last_reload_{0};
  DecisionObserver observer_;
  std::function<void()> holds_changed_;
};

}  // namespace dxshim
