// The decisions' series (shim/gpu/decision_metrics.h) on a registry of their own: every outcome
// is there from the start, and each counted one adds to its own.
#include "shim/gpu/decision_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

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
  const std::map<DecisionOutcome, double> counted = {{DecisionOutcome::kInjected, 1},
                                                     {DecisionOutcome::kVendorMix, 2}};
  const auto text = registry.Render();
  for (const auto outcome : kAllDecisionOutcomes) {
    const auto label = std::string("outcome=\"") + ToString(outcome) + "\"";
    const auto it = counted.find(outcome);
    EXPECT_EQ(Sample(text, "dxshim_create_container_decisions_total", {label}),
              it == counted.end() ? 0 : it->second)
        << label;
  }
}

}  // namespace
}  // namespace dxshim
