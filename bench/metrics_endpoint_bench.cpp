// How long a probe waits for the metrics endpoint's answer while other clients misbehave, against
// the same endpoint idle, in the same run: /readyz and a 9 KB /metrics (about a 12-GPU node's
// scrape) asked one after another, first with no other client, then while 200 connections hold a
// partial request line (opened again whenever the endpoint closes one), then while 200 ask for
// /metrics and never read. The crowds come from 127.0.0.2, the probe from 127.0.0.1 (kubelet's
// probe comes from the node's address, not a pod's). Prints p50/p99 of each and their ratios to
// idle; asserts nothing.
//
// usage: metrics_endpoint_bench [--requests N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shim/admin/http_endpoint.h"
#include "tests/support/http_clients.h"
#include "tests/support/http_get.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Latencies {
  double p50 = 0;
  double p99 = 0;
  int failed = 0;
};

Latencies Measure(const std::string& at, const std::string& path, int requests) {
  std::vector<double> ms;
  Latencies result;
  for (int i = 0; i < requests; ++i) {
    const auto start = Clock::now();
    const auto r = dxshim::test::HttpGet(at, path, std::chrono::seconds(5));
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (r.status != 200) ++result.failed;
  }
  std::sort(ms.begin(), ms.end());
  result.p50 = ms[ms.size() / 2];
  result.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  return result;
}

void Print(const char* what, const Latencies& l, const Latencies& idle) {
  std::printf("  %-40s p50 %7.3f ms (%5.2fx)  p99 %7.3f ms (%5.2fx)  failed %d\n", what, l.p50,
              l.p50 / idle.p50, l.p99, l.p99 / idle.p99, l.failed);
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 1000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--requests") == 0) requests = std::atoi(argv[i + 1]);
  }
  std::string exposition;
  while (exposition.size() < 9000) exposition += "dxshim_gpu_pods{gpu=\"0000:3b:00.0\"} 1\n";
  dxshim::admin::HttpHandlers handlers;
  handlers.metrics = [&] { return exposition; };
  handlers.not_ready = [] { return std::vector<std::string>{}; };
  dxshim::admin::HttpEndpoint endpoint("127.0.0.1:0", handlers);
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());

  std::printf("metrics endpoint, %d requests each, one after another:\n", requests);
  const auto idle_ready = Measure(at, "/readyz", requests);
  const auto idle_metrics = Measure(at, "/metrics", requests);
  Print("/readyz, idle", idle_ready, idle_ready);
  Print("/metrics, idle", idle_metrics, idle_metrics);
  {
    dxshim::test::ClientCrowd crowd("127.0.0.2", "127.0.0.1", endpoint.port(),
                                    "GET /metrics HTTP/1.1\r\n", 200, false);
    Print("/readyz, 200 silent connections", Measure(at, "/readyz", requests), idle_ready);
    Print("/metrics, 200 silent connections", Measure(at, "/metrics", requests), idle_metrics);
  }
  {
    dxshim::test::ClientCrowd crowd("127.0.0.2", "127.0.0.1", endpoint.port(),
                                    "GET /metrics HTTP/1.1\r\n\r\n", 200, true);
    Print("/readyz, 200 clients that never read", Measure(at, "/readyz", requests), idle_ready);
    Print("/metrics, 200 clients that never read", Measure(at, "/metrics", requests), idle_metrics);
  }
  return 0;
}
