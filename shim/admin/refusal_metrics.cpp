#include "shim/admin/refusal_metrics.h"

namespace dxshim::admin {

RefusalMetrics::RefusalMetrics(metrics::Metrics& metrics) {
  auto& refusals = prometheus::BuildCounter()
                       .Name("dxshim_http_refusals_total")
                       .Help(
                           "Connections the metrics endpoint closed and requests it refused, by "
                           "reason (fd_limit: times accepting paused with no descriptor left)")
                       .Register(metrics.registry());
  for (const auto refusal : kAllHttpRefusals) {
    refusals_[refusal] = &refusals.Add({{"reason", ToString(refusal)}});
  }
}

void RefusalMetrics::Refused(HttpRefusal refusal) { refusals_.at(refusal)->Increment(); }

}  // namespace dxshim::admin
