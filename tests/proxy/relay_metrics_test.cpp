// The relay's series (shim/proxy/relay_metrics.h) on a registry of their own, without a
// runtime: what each relayed call adds to the exposition, the bound on the methods a caller can
// make series of, and the runtime reconnect count.
#include "shim/proxy/relay_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "tests/support/http_get.h"

namespace dxshim {
namespace {

using std::chrono::milliseconds;
using test::Sample;

constexpr auto kVersion = "/runtime.v1.RuntimeService/Version";

double Calls(const std::string& text, const std::string& service, const std::string& method,
             const std::string& code) {
  return Sample(
      text, "dxshim_cri_calls_total",
      {"service=\"" + service + "\"", "method=\"" + method + "\"", "code=\"" + code + "\""});
}

TEST(RelayMetrics, CallsByMethodAndCodeWithTheirLatency) {
  metrics::Metrics registry;
  RelayMetrics m(registry);
  m.CallAnswered(kVersion, grpc::StatusCode::OK, std::chrono::microseconds(70));
  m.CallAnswered(kVersion, grpc::StatusCode::OK, std::chrono::microseconds(30));
  m.CallAnswered(kVersion, grpc::StatusCode::UNAVAILABLE, milliseconds(2));
  m.CallAnswered("/runtime.v1.ImageService/PullImage", grpc::StatusCode::OK, milliseconds(20000));
  const auto text = registry.Render();
  EXPECT_EQ(Calls(text, "runtime.v1.RuntimeService", "Version", "OK"), 2) << text;
  EXPECT_EQ(Calls(text, "runtime.v1.RuntimeService", "Version", "UNAVAILABLE"), 1);
  EXPECT_TRUE(std::isnan(Calls(text, "runtime.v1.RuntimeService", "Version", "INTERNAL")))
      << "codes never seen have no series";
  EXPECT_EQ(Calls(text, "runtime.v1.ImageService", "PullImage", "OK"), 1);
  const auto bucket = [&](const char* le) {
    return Sample(text, "dxshim_cri_call_duration_seconds_bucket",
                  {"method=\"Version\"", std::string("le=\"") + le + "\""});
  };
  EXPECT_EQ(bucket("5e-05"), 1);  // 30 µs
  EXPECT_EQ(bucket("0.0001"), 2);
  EXPECT_EQ(bucket("0.0025"), 3);
  EXPECT_EQ(Sample(text, "dxshim_cri_call_duration_seconds_sum", {"method=\"Version\""}), 0.0021);
  EXPECT_EQ(Sample(text, "dxshim_cri_call_duration_seconds_bucket",
                   {"method=\"PullImage\"", "le=\"10\""}),
            0)
      << "20 s is beyond the last bucket";
  EXPECT_EQ(Sample(text, "dxshim_cri_call_duration_seconds_bucket",
                   {"method=\"PullImage\"", "le=\"+Inf\""}),
            1);
}

TEST(RelayMetrics, ACallerCannotGrowTheScrapeWithoutBound) {
  metrics::Metrics registry;
  RelayMetrics m(registry);
  m.CallAnswered("/grpc.health.v1.Health/Check", grpc::StatusCode::UNIMPLEMENTED, milliseconds(1));
  m.CallAnswered("/runtime.v1.RuntimeService/", grpc::StatusCode::UNIMPLEMENTED, milliseconds(1));
  for (int i = 0; i < 500; ++i) {
    m.CallAnswered("/runtime.v1.RuntimeService/Made" + std::to_string(i),
                   grpc::StatusCode::UNIMPLEMENTED, milliseconds(1));
  }
  const auto text = registry.Render();
  EXPECT_EQ(Calls(text, "other", "other", "UNIMPLEMENTED"), 2 + 500 - 63) << text;
  EXPECT_EQ(Calls(text, "runtime.v1.RuntimeService", "Made0", "UNIMPLEMENTED"), 1);
  EXPECT_TRUE(std::isnan(Calls(text, "runtime.v1.RuntimeService", "Made499", "UNIMPLEMENTED")));
  std::size_t series = 0;
  for (auto at = text.find("\ndxshim_cri_call_duration_seconds_count{"); at != std::string::npos;
       at = text.find("\ndxshim_cri_call_duration_seconds_count{", at + 1)) {
    ++series;
  }
  EXPECT_EQ(series, CallMetrics::kMaxMethods);
}

TEST(RelayMetrics, RuntimeReconnectsCountOnlyComebacks) {
  metrics::Metrics registry;
  RelayMetrics m(registry);
  m.RuntimeState(GRPC_CHANNEL_CONNECTING);
  EXPECT_FALSE(m.runtime_connected());
  m.RuntimeState(GRPC_CHANNEL_READY);  // the first connection is not a reconnect
  m.RuntimeState(GRPC_CHANNEL_IDLE);
  m.RuntimeState(GRPC_CHANNEL_CONNECTING);
  m.RuntimeState(GRPC_CHANNEL_TRANSIENT_FAILURE);
  EXPECT_EQ(Sample(registry.Render(), "dxshim_runtime_connected"), 0);
  m.RuntimeState(GRPC_CHANNEL_READY);
  EXPECT_TRUE(m.runtime_connected());
  const auto text = registry.Render();
  EXPECT_EQ(Sample(text, "dxshim_runtime_connected"), 1);
  EXPECT_EQ(Sample(text, "dxshim_runtime_reconnects_total"), 1);
}

}  // namespace
}  // namespace dxshim
