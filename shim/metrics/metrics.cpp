#include "shim/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <sstream>

#include "shim/version/build_info.h"

namespace dxshim::metrics {
namespace {

prometheus::Counter& ResyncCounter(prometheus::Registry& registry, const std::string& result) {
  return prometheus::BuildCounter()
      .Name("dxshim_ledger_resyncs_total")
      .Help("Rebuilds of the GPU ledger from the runtime's sandboxes and containers, by result")
      .Register(registry)
      .Add({{"result", result}});
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      calls_(*registry_),
      resyncs_ok_(ResyncCounter(*registry_, "ok")),
      resyncs_failed_(ResyncCounter(*registry_, "failed")),
      resync_duration_(
          prometheus::BuildHistogram()
              .Name("dxshim_ledger_resync_duration_seconds")
              .Help("Time a ledger rebuild took (listing the runtime's sandboxes and containers)")
              .Register(*registry_)
              .Add({},
                   prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                           0.1, 0.25, 0.5, 1, 2.5, 5, 10})),
      last_resync_success_(
          prometheus::BuildGauge()
              .Name("dxshim_ledger_last_resync_success_timestamp_seconds")
              .Help("When the ledger was last rebuilt from the runtime (Unix time; 0: never)")
              .Register(*registry_)
              .Add({})),
      runtime_connected_gauge_(
          prometheus::BuildGauge()
              .Name("dxshim_runtime_connected")
              .Help("1 while dxshim's connection to the runtime (containerd) is up, else 0")
              .Register(*registry_)
              .Add({})),
      runtime_reconnects_(prometheus::BuildCounter()
                              .Name("dxshim_runtime_reconnects_total")
                              .Help("Times the runtime connection came back after it was lost")
                              .Register(*registry_)
                              .Add({})),
      pipe_clients_(prometheus::BuildCounter()
                        .Name("dxshim_pipe_clients_total")
                        .Help("Connections to kubelet's named pipe, by the connecting program's "
                              "file name (Windows; \"\" when it cannot be read)")
                        .Register(*registry_)) {
  auto& decisions =
      prometheus::BuildCounter()
          .Name("dxshim_create_container_decisions_total")
          .Help(
              "CreateContainer calls by what dxshim did: injected (devices given, the runtime "
              "created the container), passed_through, or refused with the reason (the "
              "runtime's own refusal of a rewritten request is runtime_failure)")
          .Register(*registry_);
  for (const auto outcome : kAllDecisionOutcomes) {
    decisions_[outcome] = &decisions.Add({{"outcome", ToString(outcome)}});
  }
  auto& refusals = prometheus::BuildCounter()
                       .Name("dxshim_http_refusals_total")
                       .Help(
                           "Connections the metrics endpoint closed and requests it refused, by "
                           "reason (fd_limit: times accepting paused with no descriptor left)")
                       .Register(*registry_);
  for (const auto refusal : kAllHttpRefusals) {
    http_refusals_[refusal] = &refusals.Add({{"reason", ToString(refusal)}});
  }
  const auto& build = ThisBuild();
  prometheus::BuildGauge()
      .Name("dxshim_build_info")
      .Help("Always 1; the labels say which dxshim this is")
      .Register(*registry_)
      .Add({{"version", std::string(build.version)},
            {"commit", std::string(build.commit)},
            {"platform", std::string(build.platform)}})
      .Set(1);
}

void Metrics::CallAnswered(std::string_view method, grpc::StatusCode code,
                           std::chrono::steady_clock::duration elapsed) {
  calls_.Record(method, code, elapsed);
}

void Metrics::RuntimeState(grpc_connectivity_state state) {
  const bool connected = state == GRPC_CHANNEL_READY;
  if (connected == runtime_connected_.load()) return;
  runtime_connected_ = connected;
  runtime_connected_gauge_.Set(connected ? 1 : 0);
  if (connected && runtime_was_connected_) runtime_reconnects_.Increment();
  if (connected) runtime_was_connected_ = true;
}

void Metrics::Decision(DecisionOutcome outcome) { decisions_.at(outcome)->Increment(); }

void Metrics::HttpRefused(HttpRefusal refusal) { http_refusals_.at(refusal)->Increment(); }

void Metrics::Resync(bool ok, std::chrono::steady_clock::duration took) {
  if (!ok) {
    resyncs_failed_.Increment();
    return;
  }
  resyncs_ok_.Increment();
  resync_duration_.Observe(std::chrono::duration<double>(took).count());
  last_resync_success_.Set(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void Metrics::AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect) {
  collectors_.push_back(std::move(collect));
}

std::string Metrics::Render() const {
  auto families = registry_->Collect();
  for (const auto& collect : collectors_) {
    auto more = collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

void Metrics::PipeClient(const std::string& program) {
  pipe_clients_.Add({{"program", program}}).Increment();
}

}  // namespace dxshim::metrics
