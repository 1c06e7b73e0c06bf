// dxshim's Prometheus registry: the one place every part of `dxshim serve` registers its series
// on, below all of them. It registers nothing itself: each part declares its own (the relay's
// calls: shim/proxy/relay_metrics.h; the CreateContainer decisions: shim/gpu/decision_metrics.h;
// the ledger's resyncs and the node's GPUs and holders: shim/ledger/resync_metrics.h,
// node_collector.h, holding_collector.h; the operator's endpoint's refusals:
// shim/admin/refusal_metrics.h), and `serve` wires them and adds the build's
// (shim/cli/serve_metrics.h). Events are counted as they happen; state is read at each scrape by
// collectors from the objects that own it, so it can never drift from them. The operator's HTTP
// endpoint (shim/admin/http_endpoint.h) serves Render().
#pragma once

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dxshim::metrics {

class Metrics final {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Where each part registers its counters, gauges and histograms.
  prometheus::Registry& registry() { return *registry_; }
  // Families built at each scrape, added to the registry's.
  void AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect);
  // The text exposition format (version 0.0.4) of everything.
  std::string Render() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::function<std::vector<prometheus::MetricFamily>()>> collectors_;
};

}  // namespace dxshim::metrics
