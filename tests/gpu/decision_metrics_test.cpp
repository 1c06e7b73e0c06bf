// The decisions' series (shim/gpu/decision_metrics.h) on a registry of their own: every outcome
// is there from the start, and each counted one adds to its own.
#include "shim/gpu/decision_metrics.h"

#include <gtest/gtest.h>

#include "tests/support/http_get.h"

namespace dxshim {
namespace {

using test::Sample;

TEST(DecisionMetrics, DecisionsAreAllThereFromTheStart) {
  metrics::Metrics registry;
  DecisionMetrics m(registry);
  m.Count(DecisionOutcome::kInjected);
  m.Count(DecisionOutcome::kVendorMix);
  m.Count(DecisionOutcome::kVendorMix);
  const auto text = registry.Render();
  for (const auto outcome : kAllDecisionOutcomes) {
    const double expected = outcome == DecisionOutcome::kInjected    ? 1
                            : outcome == DecisionOutcome::kVendorMix ? 2
                                                                     : 0;
    EXPECT_EQ(Sample(text, "dxshim_create_container_decisions_total",
                     {std::string("outcome=\"") + ToString(outcome) + "\""}),
              expected)
        << ToString(outcome);
  }
}

}  // namespace
}  // namespace dxshim
