// dxshim's registry (shim/metrics/metrics.h) without a runtime: the endpoint's refusals, every
// reason there from the start, the build's labels, and collectors added at scrape time.
#include "shim/metrics/metrics.h"

#include <gtest/gtest.h>

#include "shim/metrics/metric_family.h"
#include "tests/support/http_get.h"

namespace dxshim::metrics {
namespace {

using test::Sample;

TEST(Metrics, HttpRefusalsAreAllThereFromTheStart) {
  Metrics m;
  m.HttpRefused(HttpRefusal::kFdLimit);
  m.HttpRefused(HttpRefusal::kPerAddressLimit);
  m.HttpRefused(HttpRefusal::kPerAddressLimit);
  const auto text = m.Render();
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

TEST(Metrics, BuildInfoAndCollectorsAtEachScrape) {
  Metrics m;
  int scrapes = 0;
  m.AddCollector([&] {
    auto family = Family("dxshim_test_scrapes", "Scrapes so far", prometheus::MetricType::Gauge);
    AddSample(family, {}, ++scrapes);
    return std::vector<prometheus::MetricFamily>{family};
  });
  EXPECT_EQ(Sample(m.Render(), "dxshim_test_scrapes"), 1);
  const auto text = m.Render();
  EXPECT_EQ(Sample(text, "dxshim_test_scrapes"), 2);
  EXPECT_EQ(Sample(text, "dxshim_build_info"), 1) << text;
}

}  // namespace
}  // namespace dxshim::metrics
