// The CreateContainer decisions' series, registered on dxshim's registry (shim/metrics/metrics.h):
// dxshim_create_container_decisions_total{outcome}, every outcome there from the start.
#pragma once

#include <prometheus/counter.h>

#include <map>

#include "shim/gpu/decision_outcome.h"
#include "shim/metrics/metrics.h"

namespace dxshim {

class DecisionMetrics {
 public:
  explicit DecisionMetrics(metrics::Metrics& metrics);
  // One CreateContainer's outcome (the relay thread; GpuInterceptor's DecisionObserver).
  void Count(DecisionOutcome outcome);

 private:
  std::map<DecisionOutcome, prometheus::Counter*> decisions_;
};

}  // namespace dxshim
