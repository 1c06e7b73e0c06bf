// The relay's series, registered on dxshim's registry (shim/metrics/metrics.h), next to the relay
// as the ledger's and the decisions' are next to theirs: the relayed calls by method and code with
// their latency (call_metrics.h), the runtime connection, and who connects to kubelet's pipe on
// Windows. The relay reports through its observer interface (proxy_observer.h) and never
// includes this; serve hands it one (shim/cli/serve_metrics.h).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "shim/metrics/metrics.h"
#include "shim/proxy/call_metrics.h"
#include "shim/proxy/proxy_observer.h"

namespace dxshim {

class RelayMetrics final : public ProxyObserver {
 public:
  explicit RelayMetrics(metrics::Metrics& metrics);
  RelayMetrics(const RelayMetrics&) = delete;
  RelayMetrics& operator=(const RelayMetrics&) = delete;

  // ProxyObserver: the relay thread.
  void CallAnswered(std::string_view method, grpc::StatusCode code,
                    std::chrono::steady_clock::duration elapsed) override;
  void RuntimeState(grpc_connectivity_state state) override;
  // A program (its file name) connected to kubelet's pipe (Windows; the pipe's accept thread).
  void PipeClient(const std::string& program);

  bool runtime_connected() const { return runtime_connected_.load(); }

 private:
  CallMetrics calls_;
  prometheus::Gauge& runtime_connected_gauge_;
  prometheus::Counter& runtime_reconnects_;
  prometheus::Family<prometheus::Counter>& pipe_clients_;
  std::atomic<bool> runtime_connected_{false};
  bool runtime_was_connected_ = false;  // relay thread only
};

}  // namespace dxshim
