// dxshim's Prometheus metrics: one registry for what `dxshim serve` does. Events are counted as
// they happen (relayed calls, CreateContainer decisions, ledger resyncs, the runtime connection);
// the node's state (GPUs and who holds them, the device snapshot, the ledger) is read at each
// scrape from the objects that own it (node_collector.h), so it can never drift from them.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shim/gpu/decision_outcome.h"
#include "shim/metrics/call_metrics.h"
#include "shim/metrics/http_refusal.h"
#include "shim/proxy/proxy_observer.h"

namespace dxshim::metrics {

class Metrics final : public ProxyObserver {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // ProxyObserver: the relay thread.
  void CallAnswered(std::string_view method, grpc::StatusCode code,
                    std::chrono::steady_clock::duration elapsed) override;
  void RuntimeState(grpc_connectivity_state state) override;

  void Decision(DecisionOutcome outcome);
  void Resync(bool ok, std::chrono::steady_clock::duration took);
  // The operator's endpoint closed a connection or refused a request (its thread).
  void HttpRefused(HttpRefusal refusal);
  // A program (its file name) connected to kubelet's pipe (Windows; the pipe's accept thread).
  void PipeClient(const std::string& program);

  bool runtime_connected() const { return runtime_connected_.load(); }
  // Families built at each scrape, added to the registry's.
  void AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect);
  // The text exposition format (version 0.0.4) of everything.
  std::string Render() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  CallMetrics calls_;
  std::map<DecisionOutcome, prometheus::Counter*> decisions_;
  std::map<HttpRefusal, prometheus::Counter*> http_refusals_;
  prometheus::Counter& resyncs_ok_;
  prometheus::Counter& resyncs_failed_;
  prometheus::Histogram& resync_duration_;
  prometheus::Gauge& last_resync_success_;
  prometheus::Gauge& runtime_connected_gauge_;
  prometheus::Counter& runtime_reconnects_;
  prometheus::Family<prometheus::Counter>& pipe_clients_;
  std::atomic<bool> runtime_connected_{false};
  bool runtime_was_connected_ = false;  // relay thread only
  std::vector<std::function<std::vector<prometheus::MetricFamily>()>> collectors_;
};

}  // namespace dxshim::metrics
