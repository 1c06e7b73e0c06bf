// `dxshim serve`'s metrics put together: dxshim's registry with every part's series on it (the
// relay's, the decisions', the ledger's resyncs, the endpoint's refusals) and the build's, the
// node's GPUs and holders read at each scrape, and the operator's HTTP endpoint (shim/admin) that
// serves them. docs/metrics.md lists exactly what
// a scrape of this carries (tests/cli/serve_metrics_test.cpp).
#pragma once

#include <memory>
#include <string>

#include "devices/device_source.h"
#include "shim/admin/http_endpoint.h"
#include "shim/admin/refusal_metrics.h"
#include "shim/gpu/decision_metrics.h"
#include "shim/ledger/ledger.h"
#include "shim/ledger/resync_metrics.h"
#include "shim/metrics/metrics.h"
#include "shim/proxy/relay_metrics.h"

namespace dxshim {

class ServeMetrics {
 public:
  // Every part's series, and dxshim_build_info (what this build is: shim/version).
  ServeMetrics();
  ServeMetrics(const ServeMetrics&) = delete;
  ServeMetrics& operator=(const ServeMetrics&) = delete;

  // Adds the node's GPUs and who holds them (shim/ledger/node_collector.h,
  // holding_collector.h), read from `snapshot` and `ledger` at each scrape; once (a second call
  // adds nothing).
  void CollectNode(const devices::DeviceSnapshot& snapshot, const Ledger& ledger);

  metrics::Metrics registry;
  RelayMetrics relay;
  DecisionMetrics decisions;
  ResyncMetrics resyncs;
  admin::RefusalMetrics http_refusals;

 private:
  bool collecting_node_ = false;
};

// The operator's endpoint on `listen` (HOST:PORT): /metrics renders `metrics` (with the node's
// GPUs and holders), /readyz says what is missing. Throws when it cannot listen.
std::unique_ptr<admin::HttpEndpoint> ServeMetricsEndpoint(const std::string& listen,
                                                          ServeMetrics& metrics,
                                                          const devices::DeviceSnapshot& snapshot,
                                                          const Ledger& ledger);

}  // namespace dxshim
