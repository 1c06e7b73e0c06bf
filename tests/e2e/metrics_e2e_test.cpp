// dxshim's metrics endpoint in front of a real containerd (linux target, one test GPU given to
// one pod at most): after a scripted scenario (one pod given the GPU, one refused, one plain pod)
// /metrics shows exactly those decisions and calls, Debian's promtool accepts the exposition, a
// real Prometheus server (Debian's `prometheus`) scrapes dxshim and its query API returns the
// GPU-holders series, and /readyz follows containerd going away and coming back; the endpoint
// also serves on the IPv6 loopback address. The GPU is a device node the test makes (see
// test_gpu.h): no GPU exists here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>

#include "tests/support/gpu_node.h"
#include "tests/support/http_get.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

class Metrics : public GpuNodeTest {
 protected:
  void SetUp() override {
    StartDxshim(1, {"--metrics-listen", "127.0.0.1:0", "--resync-interval", "1s", "--device-plugin",
                    "false"});
    address_ = MetricsAddress(Log());
    ASSERT_NE(address_, "") << Log();
  }

  std::string Scrape() {
    auto r = HttpGet(address_, "/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
  }

  // One pod given the GPU, one refused (the GPU is taken), one plain pod: 3 CreateContainer
  // calls, 2 StartContainer, 3 RunPodSandbox.
  void Scenario() {
    std::string id;
    ASSERT_TRUE(CreateAndStart(RunPod("gpu-a", true), &id).ok()) << Log();
    EXPECT_EQ(CreateAndStart(RunPod("gpu-b", true), &id).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
    ASSERT_TRUE(CreateAndStart(RunPod("plain-c", false), &id).ok()) << Log();
  }

  std::string address_;
};

double Decisions(const std::string& text, const std::string& outcome) {
  return Sample(text, "dxshim_create_container_decisions_total", {"outcome=\"" + outcome + "\""});
}

double Calls(const std::string& text, const std::string& method, const std::string& code) {
  return Sample(text, "dxshim_cri_calls_total",
                {"service=\"runtime.v1.RuntimeService\"", "method=\"" + method + "\"",
                 "code=\"" + code + "\""});
}

TEST_F(Metrics, AScriptedScenarioShowsExactlyItsCounts) {
  Scenario();
  const auto text = Scrape();
  EXPECT_EQ(Decisions(text, "injected"), 1) << text;
  EXPECT_EQ(Decisions(text, "exhausted"), 1);
  EXPECT_EQ(Decisions(text, "passed_through"), 1);
  for (const auto* other : {"invalid_annotation", "no_match", "vendor_mix", "namespace",
                            "not_synced", "runtime_failure", "vm_sandbox", "runtime_files_gone",
                            "memory_exhausted", "memory_too_large", "not_utf8"}) {
    EXPECT_EQ(Decisions(text, other), 0) << other;
  }
  EXPECT_EQ(Calls(text, "RunPodSandbox", "OK"), 3);
  EXPECT_EQ(Calls(text, "CreateContainer", "OK"), 2);
  EXPECT_EQ(Calls(text, "CreateContainer", "RESOURCE_EXHAUSTED"), 1);
  EXPECT_EQ(Calls(text, "StartContainer", "OK"), 2);
  EXPECT_EQ(Sample(text, "dxshim_cri_call_duration_seconds_count", {"method=\"CreateContainer\""}),
            3);
  // The latency histogram's buckets cover 50 µs to 10 s.
  EXPECT_FALSE(std::isnan(Sample(text, "dxshim_cri_call_duration_seconds_bucket",
                                 {"method=\"CreateContainer\"", "le=\"5e-05\""})));
  EXPECT_EQ(Sample(text, "dxshim_cri_call_duration_seconds_bucket",
                   {"method=\"CreateContainer\"", "le=\"10\""}),
            3);
  // The GPU: one pod holds it, of one slot, shared (not exclusive).
  const std::vector<std::string> gpu = {"gpu=\"0000:e2:00.0\"", "vendor=\"NVIDIA\""};
  EXPECT_EQ(Sample(text, "dxshim_gpu_pods", gpu), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_pod_slots", gpu), 1);
  EXPECT_EQ(Sample(text, "dxshim_gpu_exclusive", gpu), 0);
  // Its 16Gi, all reserved by the one pod (the default: 16Gi over max-containers-per-device 1).
  EXPECT_EQ(Sample(text, "dxshim_gpu_memory_bytes", gpu), 16.0 * (1ull << 30));
  EXPECT_EQ(Sample(text, "dxshim_gpu_memory_reserved_bytes", gpu), 16.0 * (1ull << 30));
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 1);
  EXPECT_EQ(Sample(text, "dxshim_runtime_connected"), 1);
  EXPECT_EQ(Sample(text, "dxshim_ledger_synced"), 1);
  EXPECT_GE(Sample(text, "dxshim_ledger_resyncs_total", {"result=\"ok\""}), 1);
  EXPECT_GT(Sample(text, "dxshim_ledger_last_resync_success_timestamp_seconds"), 1.7e9);
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_loads_total"), 1);
  EXPECT_EQ(Sample(text, "dxshim_device_source_info",
                   {"source=\"inventory " + (dir_ / "inventory.yaml") + "\""}),
            1)
      << text;
  // build info: what `dxshim --version` says.
  std::string version;
  ASSERT_EQ(RunDxshim({"--version"}, dir_ / "version.log", &version), 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(version, m, std::regex(R"(dxshim (\S+) \(commit (\S+), (\S+)\))")))
      << version;
  EXPECT_EQ(Sample(text, "dxshim_build_info",
                   {"version=\"" + m[1].str() + "\"", "commit=\"" + m[2].str() + "\"",
                    "platform=\"" + m[3].str() + "\""}),
            1)
      << text << version;

  // Debian's promtool lints the exposition: no output, exit 0.
  std::ofstream(dir_ / "metrics.txt") << text;
  Process promtool({"sh", "-c", "promtool check metrics < " + dir_ / "metrics.txt"},
                   dir_ / "promtool.log");
  EXPECT_EQ(promtool.Wait(seconds(60)), 0) << promtool.Log();
  EXPECT_EQ(promtool.Log(), "");
}

TEST_F(Metrics, APrometheusServerScrapesTheGpuHolders) {
  Scenario();
  const int port = FreeLoopbackPort();
  const auto web = "127.0.0.1:" + std::to_string(port);
  std::ofstream(dir_ / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n"
      << "scrape_configs:\n  - job_name: dxshim\n"
      << "    static_configs:\n      - targets: ['" << address_ << "']\n";
  Process prometheus({"prometheus", "--config.file=" + dir_ / "prometheus.yml",
                      "--storage.tsdb.path=" + dir_ / "tsdb", "--web.listen-address=" + web},
                     dir_ / "prometheus.log");
  // The query API: the pods holding each GPU, as Prometheus stored them from its scrapes.
  std::string answer;
  const bool scraped = WaitFor(
      [&] {
        answer = HttpGet(web, "/api/v1/query?query=dxshim_gpu_pods").body;
        return answer.find("\"result\":[{") != std::string::npos;
      },
      seconds(60));
  ASSERT_TRUE(scraped) << answer << "\n" << prometheus.Log();
  EXPECT_NE(answer.find("\"__name__\":\"dxshim_gpu_pods\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"gpu\":\"0000:e2:00.0\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"job\":\"dxshim\""), std::string::npos) << answer;
  EXPECT_NE(answer.find(",\"1\"]"), std::string::npos) << "one pod holds the GPU: " << answer;
  // And the target is healthy: Prometheus parsed every scrape.
  const auto up = HttpGet(web, "/api/v1/query?query=up").body;
  EXPECT_NE(up.find(",\"1\"]"), std::string::npos) << up;
}

TEST_F(Metrics, ReadyzFollowsTheRuntime) {
  const auto ready = [&] { return HttpGet(address_, "/readyz").status == 200; };
  ASSERT_TRUE(WaitFor(ready, seconds(30))) << HttpGet(address_, "/readyz").body;
  EXPECT_EQ(HttpGet(address_, "/healthz").status, 200);

  containerd_.Kill();
  HttpResponse r;
  ASSERT_TRUE(
      WaitFor([&] { return (r = HttpGet(address_, "/readyz")).status == 503; }, seconds(30)))
      << r.status << " " << r.body;
  EXPECT_NE(r.body.find("runtime: not connected"), std::string::npos) << r.body;
  EXPECT_EQ(HttpGet(address_, "/healthz").status, 200) << "the process still serves";
  // A scrape may show what was a second ago: one rendering answers every scrape within a second.
  std::string text;
  EXPECT_TRUE(
      WaitFor([&] { return Sample(text = Scrape(), "dxshim_runtime_connected") == 0; }, seconds(5)))
      << text;

  containerd_.Restart();
  ASSERT_TRUE(WaitFor(ready, seconds(60))) << HttpGet(address_, "/readyz").body;
  EXPECT_TRUE(
      WaitFor([&] { return Sample(text = Scrape(), "dxshim_runtime_connected") == 1; }, seconds(5)))
      << text;
  EXPECT_GE(Sample(text, "dxshim_runtime_reconnects_total"), 1);
}

TEST_F(Metrics, OnlyItsThreePathsAnswer) {
  EXPECT_EQ(HttpGet(address_, "/").status, 404);
  EXPECT_EQ(HttpGet(address_, "/metrics/x").status, 404);
  EXPECT_EQ(HttpGet(address_, "/etc/passwd").status, 404);
  EXPECT_EQ(HttpRequest(address_, "POST", "/metrics").status, 405);
  const auto head = HttpRequest(address_, "HEAD", "/healthz");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
}

// metrics-listen on the IPv6 loopback address: the real dxshim listens there and answers its
// three paths over IPv6.
class MetricsOnIpv6 : public GpuNodeTest {};

TEST_F(MetricsOnIpv6, TheThreePathsAnswerOnIpv6Loopback) {
  StartDxshim(1, {"--metrics-listen", "[::1]:0", "--device-plugin", "false"});
  const auto address = MetricsAddress(Log());
  ASSERT_TRUE(address.starts_with("[::1]:")) << Log();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(address, "/readyz").status == 200; }, seconds(30)))
      << HttpGet(address, "/readyz").body;
  EXPECT_EQ(HttpGet(address, "/healthz").status, 200);
  const auto metrics = HttpGet(address, "/metrics");
  EXPECT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_EQ(Sample(metrics.body, "dxshim_gpus"), 1) << metrics.body;
}

}  // namespace
}  // namespace dxshim::test
