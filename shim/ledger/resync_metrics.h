// The ledger's rebuilds from the runtime, as series on dxshim's registry
// (shim/metrics/metrics.h): dxshim_ledger_resyncs_total{result}, their duration, and when the
// last one succeeded. The poller reports each attempt (RuntimeRecordPoller::set_resync_timer).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <chrono>

#include "shim/metrics/metrics.h"

namespace dxshim {

class ResyncMetrics {
 public:
  explicit ResyncMetrics(metrics::Metrics& metrics);
  // One attempt: whether the runtime could be listed, and how long it took (the poller thread).
  void Resync(bool ok, std::chrono::steady_clock::duration took);

 private:
  prometheus::Counter& ok_;
  prometheus::Counter& failed_;
  prometheus::Histogram& duration_;
  prometheus::Gauge& last_success_;
};

}  // namespace dxshim
