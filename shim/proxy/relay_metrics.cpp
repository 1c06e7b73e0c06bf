#include "shim/proxy/relay_metrics.h"

namespace dxshim {

RelayMetrics::RelayMetrics(metrics::Metrics& metrics)
    : calls_(metrics.registry()),
      runtime_connected_gauge_(
          prometheus::BuildGauge()
              .Name("dxshim_runtime_connected")
              .Help("1 while dxshim's connection to the runtime (containerd) is up, else 0")
              .Register(metrics.registry())
              .Add({})),
      runtime_reconnects_(prometheus::BuildCounter()
                              .Name("dxshim_runtime_reconnects_total")
                              .Help("Times the runtime connection came back after it was lost")
                              .Register(metrics.registry())
                              .Add({})),
      pipe_clients_(prometheus::BuildCounter()
                        .Name("dxshim_pipe_clients_total")
                        .Help("Connections to kubelet's named pipe, by the connecting program's "
                              "file name (Windows; \"\" when it cannot be read)")
                        .Register(metrics.registry())) {}

void RelayMetrics::CallAnswered(std::string_view method, grpc::StatusCode code,
                                std::chrono::steady_clock::duration elapsed) {
  calls_.Record(method, code, elapsed);
}

void RelayMetrics::RuntimeState(grpc_connectivity_state state) {
  const bool connected = state == GRPC_CHANNEL_READY;
  if (connected == runtime_connected_.load()) return;
  runtime_connected_ = connected;
  runtime_connected_gauge_.Set(connected ? 1 : 0);
  if (connected && runtime_was_connected_) runtime_reconnects_.Increment();
  if (connected) runtime_was_connected_ = true;
}

void RelayMetrics::PipeClient(const std::string& program) {
  pipe_clients_.Add({{"program", program}}).Increment();
}

}  // namespace dxshim
