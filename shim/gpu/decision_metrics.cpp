#include "shim/gpu/decision_metrics.h"

namespace dxshim {

DecisionMetrics::DecisionMetrics(metrics::Metrics& metrics) {
  auto& decisions =
      prometheus::BuildCounter()
          .Name("dxshim_create_container_decisions_total")
          .Help(
              "CreateContainer calls by what dxshim did: injected (devices given, the runtime "
              "created the container), passed_through, or refused with the reason (the "
              "runtime's own refusal of a rewritten request is runtime_failure)")
          .Register(metrics.registry());
  for (const auto outcome : kAllDecisionOutcomes) {
    decisions_[outcome] = &decisions.Add({{"outcome", ToString(outcome)}});
  }
}

void DecisionMetrics::Count(DecisionOutcome outcome) { decisions_.at(outcome)->Increment(); }

}  // namespace dxshim
