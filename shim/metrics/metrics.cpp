#include "shim/metrics/metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "shim/version/build_info.h"

namespace dxshim::metrics {

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
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

void Metrics::HttpRefused(HttpRefusal refusal) { http_refusals_.at(refusal)->Increment(); }

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

}  // namespace dxshim::metrics
