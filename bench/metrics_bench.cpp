// What dxshim's metrics cost the relay thread per call: the two clock reads ProxiedCall makes and
// Metrics::CallAnswered (method lookup, status counter, latency histogram), for a mix of 12 CRI
// methods and 3 codes. Printed next to, in the same run, the cost of one thing the relay already
// does per call (copying the method name into a std::string, as GenericStub::PrepareUnaryCall
// does), and again while another thread scrapes without pause (the histograms' locks contended).
// And what one scrape of those series costs (off the relay path).
//
// usage: metrics_bench [--calls N]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "shim/metrics/metrics.h"

namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> kMethods = {
    "/runtime.v1.RuntimeService/Version",         "/runtime.v1.RuntimeService/ListContainers",
    "/runtime.v1.RuntimeService/ContainerStatus", "/runtime.v1.RuntimeService/PodSandboxStatus",
    "/runtime.v1.RuntimeService/ListPodSandbox",  "/runtime.v1.RuntimeService/CreateContainer",
    "/runtime.v1.RuntimeService/StartContainer",  "/runtime.v1.RuntimeService/ExecSync",
    "/runtime.v1.RuntimeService/ContainerStats",  "/runtime.v1.ImageService/ImageStatus",
    "/runtime.v1.ImageService/ImageFsInfo",       "/runtime.v1.RuntimeService/Status"};
const grpc::StatusCode kCodes[] = {grpc::StatusCode::OK, grpc::StatusCode::NOT_FOUND,
                                   grpc::StatusCode::OK};

// ns per iteration of `body(i)`.
template <typename Body>
double NsPer(int calls, Body&& body) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) body(i);
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::stoi(argv[i + 1]);
  }
  dxshim::metrics::Metrics metrics;
  const auto record = [&](int i) {
    const auto accepted = Clock::now();  // ProxiedCall::Accepted
    const auto& method = kMethods[static_cast<std::size_t>(i) % kMethods.size()];
    metrics.CallAnswered(method, kCodes[static_cast<std::size_t>(i) % 3], Clock::now() - accepted);
  };
  volatile std::size_t sink = 0;  // keeps the copies from being optimized away
  const auto copy_method = [&](int i) {
    const std::string copy(kMethods[static_cast<std::size_t>(i) % kMethods.size()]);
    sink = sink + copy.size();
  };
  NsPer(calls / 10, record);  // warm: every series exists
  NsPer(calls / 10, copy_method);
  const double base = NsPer(calls, copy_method);
  const double cost = NsPer(calls, record);
  std::printf("per call: metrics %.1f ns | copying the method name %.1f ns | ratio %.2fx\n", cost,
              base, cost / base);

  std::atomic<bool> stop{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    while (!stop) {
      sink = sink + metrics.Render().size();
      ++scrapes;
    }
  });
  const double contended = NsPer(calls, record);
  stop = true;
  scraper.join();
  std::printf(
      "per call while another thread scrapes without pause (%d scrapes): %.1f ns | "
      "ratio to uncontended %.2fx\n",
      scrapes.load(), contended, contended / cost);
  std::size_t bytes = 0;
  const double scrape_us = NsPer(200, [&](int) { bytes = metrics.Render().size(); }) / 1000.0;
  std::printf("one scrape: %.0f us for %zu bytes (%zu methods)\n", scrape_us, bytes,
              kMethods.size());
  return 0;
}
