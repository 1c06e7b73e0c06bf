// The ledger's resync series (shim/ledger/resync_metrics.h) on a registry of their own: a failed
// attempt counts as failed and sets nothing else; a successful one its duration and its time.
#include "shim/ledger/resync_metrics.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/support/http_get.h"

namespace dxshim {
namespace {

using std::chrono::milliseconds;
using test::Sample;

TEST(ResyncMetrics, Resyncs) {
  metrics::Metrics registry;
  ResyncMetrics m(registry);
  EXPECT_EQ(Sample(registry.Render(), "dxshim_ledger_last_resync_success_timestamp_seconds"), 0);
  m.Resync(false, milliseconds(5000));
  m.Resync(true, milliseconds(3));
  const auto text = registry.Render();
  EXPECT_EQ(Sample(text, "dxshim_ledger_resyncs_total", {"result=\"ok\""}), 1);
  EXPECT_EQ(Sample(text, "dxshim_ledger_resyncs_total", {"result=\"failed\""}), 1);
  EXPECT_EQ(Sample(text, "dxshim_ledger_resync_duration_seconds_count"), 1);
  EXPECT_GT(Sample(text, "dxshim_ledger_last_resync_success_timestamp_seconds"), 1.7e9);
}

}  // namespace
}  // namespace dxshim
