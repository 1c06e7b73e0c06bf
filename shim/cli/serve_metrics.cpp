#include "shim/cli/serve_metrics.h"

#include <prometheus/gauge.h>
#include <spdlog/spdlog.h>

#include "shim/base/host_port.h"
#include "shim/ledger/holding_collector.h"
#include "shim/ledger/node_collector.h"
#include "shim/version/build_info.h"

namespace dxshim {

ServeMetrics::ServeMetrics()
    : relay(registry), decisions(registry), resyncs(registry), http_refusals(registry) {
  const auto& build = ThisBuild();
  prometheus::BuildGauge()
      .Name("dxshim_build_info")
      .Help("Always 1; the labels say which dxshim this is")
      .Register(registry.registry())
      .Add({{"version", std::string(build.version)},
            {"commit", std::string(build.commit)},
            {"platform", std::string(build.platform)}})
      .Set(1);
}

void ServeMetrics::CollectNode(const devices::DeviceSnapshot& snapshot, const Ledger& ledger) {
  if (collecting_node_) return;
  collecting_node_ = true;
  registry.AddCollector([&] { return dxshim::CollectNode(snapshot, ledger); });
  registry.AddCollector([&] { return CollectHoldings(snapshot, ledger); });
}

std::unique_ptr<admin::HttpEndpoint> ServeMetricsEndpoint(const std::string& listen,
                                                          ServeMetrics& metrics,
                                                          const devices::DeviceSnapshot& snapshot,
                                                          const Ledger& ledger) {
  metrics.CollectNode(snapshot, ledger);
  admin::HttpHandlers handlers;
  handlers.metrics = [&metrics] { return metrics.registry.Render(); };
  handlers.refused = [&metrics](admin::HttpRefusal refusal) {
    metrics.http_refusals.Refused(refusal);
  };
  handlers.not_ready = [&] {
    return NotReady(metrics.relay.runtime_connected(), snapshot, ledger);
  };
  auto http = std::make_unique<admin::HttpEndpoint>(listen, std::move(handlers));
  spdlog::info("metrics: serving http://{}:{}/metrics, /healthz and /readyz", HostTextOf(listen),
               http->port());
  return http;
}

}  // namespace dxshim
