#include "shim/cli/serve_metrics.h"

#include <spdlog/spdlog.h>

#include "shim/base/host_port.h"
#include "shim/ledger/holding_collector.h"
#include "shim/ledger/node_collector.h"

namespace dxshim {

void ServeMetrics::CollectNode(const devices::DeviceSnapshot& snapshot, const Ledger& ledger) {
  if (collecting_node_) return;
  collecting_node_ = true;
  registry.AddCollector([&] { return dxshim::CollectNode(snapshot, ledger); });
  registry.AddCollector([&] { return CollectHoldings(snapshot, ledger); });
}

std::unique_ptr<metrics::HttpEndpoint> ServeMetricsEndpoint(const std::string& listen,
                                                            ServeMetrics& metrics,
                                                            const devices::DeviceSnapshot& snapshot,
                                                            const Ledger& ledger) {
  metrics.CollectNode(snapshot, ledger);
  metrics::HttpHandlers handlers;
  handlers.metrics = [&metrics] { return metrics.registry.Render(); };
  handlers.refused = [&metrics](metrics::HttpRefusal refusal) {
    metrics.registry.HttpRefused(refusal);
  };
  handlers.not_ready = [&] {
    return NotReady(metrics.relay.runtime_connected(), snapshot, ledger);
  };
  auto http = std::make_unique<metrics::HttpEndpoint>(listen, std::move(handlers));
  spdlog::info("metrics: serving http://{}:{}/metrics, /healthz and /readyz", HostTextOf(listen),
               http->port());
  return http;
}

}  // namespace dxshim
