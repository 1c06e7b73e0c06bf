// The operator's endpoint's refusals as a series on dxshim's registry (shim/metrics/metrics.h):
// dxshim_http_refusals_total{reason}, one sample per HttpRefusal from the start (0 until it
// happens). The endpoint itself knows nothing of the registry: serve hands Refused to it as
// HttpHandlers::refused (shim/cli/serve_metrics.cpp).
#pragma once

#include <prometheus/counter.h>

#include <map>

#include "shim/admin/http_refusal.h"
#include "shim/metrics/metrics.h"

namespace dxshim::admin {

class RefusalMetrics final {
 public:
  explicit RefusalMetrics(metrics::Metrics& metrics);
  RefusalMetrics(const RefusalMetrics&) = delete;
  RefusalMetrics& operator=(const RefusalMetrics&) = delete;

  // The endpoint closed a connection or refused a request (its thread).
  void Refused(HttpRefusal refusal);

 private:
  std::map<HttpRefusal, prometheus::Counter*> refusals_;
};

}  // namespace dxshim::admin
