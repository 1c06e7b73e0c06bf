// The operator's endpoint's refusals on dxshim's registry (shim/admin/refusal_metrics.h): every
// reason there from the start at 0, each refusal counted under its own reason only.
#include "shim/admin/refusal_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/http_get.h"

namespace dxshim::admin {
namespace {

using test::Sample;

TEST(RefusalMetrics, EveryReasonIsThereFromTheStart) {
  metrics::Metrics registry;
  RefusalMetrics m(registry);
  m.Refused(HttpRefusal::kFdLimit);
  m.Refused(HttpRefusal::kPerAddressLimit);
  m.Refused(HttpRefusal::kPerAddressLimit);
  const auto text = registry.Render();
  for (const auto refusal : kAllHttpRefusals) {
    const double expected = refusal == HttpRefusal::kFdLimit           ? 1
                            : refusal == HttpRefusal::kPerAddressLimit ? 2
                                                                       : 0;
    EXPECT_EQ(Sample(text, "dxshim_http_refusals_total",
                     {std::string("reason=\"") + ToString(refusal) + "\""}),
              expected)
        << ToString(refusal);
  }
}

}  // namespace
}  // namespace dxshim::admin
