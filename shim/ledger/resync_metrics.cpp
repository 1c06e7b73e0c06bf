#include "shim/ledger/resync_metrics.h"

#include <string>

namespace dxshim {
namespace {

prometheus::Counter& ResyncCounter(prometheus::Registry& registry, const std::string& result) {
  return prometheus::BuildCounter()
      .Name("dxshim_ledger_resyncs_total")
      .Help("Rebuilds of the GPU ledger from the runtime's sandboxes and containers, by result")
      .Register(registry)
      .Add({{"result", result}});
}

}  // namespace

ResyncMetrics::ResyncMetrics(metrics::Metrics& metrics)
    : ok_(ResyncCounter(metrics.registry(), "ok")),
      failed_(ResyncCounter(metrics.registry(), "failed")),
      duration_(
          prometheus::BuildHistogram()
              .Name("dxshim_ledger_resync_duration_seconds")
              .Help("Time a ledger rebuild took (listing the runtime's sandboxes and containers)")
              .Register(metrics.registry())
              .Add({},
                   prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                           0.1, 0.25, 0.5, 1, 2.5, 5, 10})),
      last_success_(
          prometheus::BuildGauge()
              .Name("dxshim_ledger_last_resync_success_timestamp_seconds")
              .Help("When the ledger was last rebuilt from the runtime (Unix time; 0: never)")
              .Register(metrics.registry())
              .Add({})) {}

void ResyncMetrics::Resync(bool ok, std::chrono::steady_clock::duration took) {
  if (!ok) {
    failed_.Increment();
    return;
  }
  ok_.Increment();
  duration_.Observe(std::chrono::duration<double>(took).count());
  last_success_.Set(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace dxshim
