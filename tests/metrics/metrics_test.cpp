// dxshim's registry (shim/metrics/metrics.h) without a runtime: what parts register on it and the
// collectors added to it are both in each scrape, the collectors read anew at every one, and the
// registry adds nothing of its own.
#include "shim/metrics/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>

#include "shim/metrics/metric_family.h"
#include "tests/support/http_get.h"

namespace dxshim::metrics {
namespace {

using test::Sample;

TEST(Metrics, RegisteredSeriesAndCollectorsAtEachScrape) {
  Metrics m;
  EXPECT_EQ(m.Render(), "") << "the registry registers nothing itself";
  prometheus::BuildCounter()
      .Name("dxshim_test_events_total")
      .Help("Events so far")
      .Register(m.registry())
      .Add({{"kind", "a"}})
      .Increment(3);
  int scrapes = 0;
  m.AddCollector([&] {
    auto family = Family("dxshim_test_scrapes", "Scrapes so far", prometheus::MetricType::Gauge);
    AddSample(family, {}, ++scrapes);
    return std::vector<prometheus::MetricFamily>{family};
  });
  EXPECT_EQ(Sample(m.Render(), "dxshim_test_scrapes"), 1);
  const auto text = m.Render();
  EXPECT_EQ(Sample(text, "dxshim_test_scrapes"), 2);
  EXPECT_EQ(Sample(text, "dxshim_test_events_total", {"kind=\"a\""}), 3) << text;
  EXPECT_NE(text.find("# TYPE dxshim_test_scrapes gauge"), std::string::npos) << text;
}

TEST(Metrics, ACollectorsCounterFamilyIsACounter) {
  Metrics m;
  m.AddCollector([] {
    auto family = Family("dxshim_test_loads_total", "Loads", prometheus::MetricType::Counter);
    AddSample(family, {{"source", "x"}}, 7);
    return std::vector<prometheus::MetricFamily>{family};
  });
  const auto text = m.Render();
  EXPECT_NE(text.find("# TYPE dxshim_test_loads_total counter"), std::string::npos) << text;
  EXPECT_EQ(Sample(text, "dxshim_test_loads_total", {"source=\"x\""}), 7) << text;
}

}  // namespace
}  // namespace dxshim::metrics
