// The interceptor `dxshim serve` installs: CreateContainer gets its devices (decided from the
// current device snapshot), and what passes through keeps the ledger current: a failed
// CreateContainer releases its reservation, a successful one commits it to the pod, a stopped or
// removed pod sandbox frees its share. Container stops and removals change nothing: the pod
// keeps its devices across container restarts (crash loops, init containers).
#pragma once

#include <functional>

#include "devices/allocation/allocator.h"
#include "devices/device_source.h"
#include "shim/gpu/container_decision.h"
#include "shim/gpu/injection.h"
#include "shim/gpu/ledger_sync.h"
#include "shim/proxy/interceptor.h"

namespace dxshim {

class GpuInterceptor : public RequestInterceptor {
 public:
  // Told what became of each CreateContainer (on the relay thread: it must only count).
  using DecisionObserver = std::function<void(DecisionOutcome)>;
  // `sync` may be null (no kick on exhaustion).
  GpuInterceptor(const devices::DeviceSnapshot& snapshot, devices::Allocator& allocator,
                 TargetOptions target, LedgerSync* sync, DecisionObserver observer = {});

  bool Wants(std::string_view method) const override;
  Interception Intercept(std::string_view method, std::string_view request) override;

 private:
  Interception CreateContainer(std::string_view request);
  void Report(DecisionOutcome outcome) const {
    if (observer_) observer_(outcome);
  }

  const devices::DeviceSnapshot& snapshot_;
  devices::Allocator& allocator_;
  TargetOptions target_;
  LedgerSync* sync_;
  DecisionObserver observer_;
};

}  // namespace dxshim
