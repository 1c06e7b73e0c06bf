// What dxshim's metrics cost the relay thread per call: the two clock reads ProxiedCall makes and
// RelayMetrics::CallAnswered (method lookup, status counter, latency histogram), for a mix of 12
// CRI methods and 3 codes. Printed next to, in the same run, the cost of one thing the relay
// already does per call (copying the method name into a std::string, as
// GenericStub::PrepareUnaryCall does), and again while another thread scrapes without pause (the
// histograms' locks contended). And what one scrape of those series costs (off the relay path), and
// a scrape of a node whose 16 GPUs are held by 500 containers (one dxshim_container_gpu_info series
// each, plus each pod's reservation) next to the same node with no holder. The 16 GPUs are made up:
// no GPU exists here.
//
// usage: metrics_bench [--calls N] [--holders N]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "devices/allocation/device_request.h"
#include "devices/device_source.h"
#include "shim/cli/serve_metrics.h"
#include "shim/ledger/ledger.h"
#include "tests/support/ledger_reserve.h"

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

// 16 made-up GPUs of 24Gi, as discovery would list a large Windows node.
class MadeUpGpus : public dxshim::devices::DeviceSource {
 public:
  std::string Name() const override { return "16 made-up GPUs"; }
  bool Changed() override { return false; }
  std::vector<dxshim::devices::Device> Load() override {
    std::vector<dxshim::devices::Device> out;
    for (unsigned i = 0; i < 16; ++i) {
      dxshim::devices::Device d;
      d.id =
          "PCI\\VEN_10DE&DEV_2236&SUBSYS_148210DE&REV_A1\\4&3A8F0B2&0&00" + std::to_string(10 + i);
      d.luid = 0x10000 + i;
      d.location_path = "PCIROOT(0)#PCI(" + std::to_string(1000 + i) + ")";
      d.description = "NVIDIA A10";
      d.vendor = "NVIDIA";
      d.vendor_id = 0x10de;
      d.dedicated_memory = 24ull << 30;
      out.push_back(std::move(d));
    }
    return out;
  }
};

// Microseconds per scrape of the node's GPU series with `holders` pods holding GPUs (one
// container each, 512Mi asked), and the bytes of one scrape.
double ScrapeWithHolders(int holders, std::size_t* bytes) {
  dxshim::devices::SnapshotOptions options;
  dxshim::devices::DeviceSnapshot snapshot(std::make_unique<MadeUpGpus>(), options);
  dxshim::devices::AllocationPolicy policy;
  policy.max_containers_per_device = 64;
  dxshim::Ledger ledger(policy);
  ledger.BeginResync();
  ledger.FinishResync({});
  const auto request = *dxshim::devices::ParseDeviceRequest({{"dxshim.io/gpu-memory", "512Mi"}});
  for (int i = 0; i < holders; ++i) {
    const auto sandbox = "sandbox-" + std::to_string(i);
    ledger.Commit(dxshim::test::Reserve(
                      ledger, *snapshot.Current(), request, sandbox,
                      "team-" + std::to_string(i % 7) + "/encoder-" + std::to_string(i), "encoder")
                      .id);
  }
  dxshim::ServeMetrics metrics;  // every series serve registers
  metrics.CollectNode(snapshot, ledger);
  *bytes = metrics.registry.Render().size();
  return NsPer(200, [&](int) { *bytes = metrics.registry.Render().size(); }) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2'000'000;
  int holders = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::stoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--holders") == 0) holders = std::stoi(argv[i + 1]);
  }
  dxshim::ServeMetrics serve;  // every series serve registers
  auto& metrics = serve.registry;
  auto& relay = serve.relay;
  const auto record = [&](int i) {
    const auto accepted = Clock::now();  // ProxiedCall::Accepted
    const auto& method = kMethods[static_cast<std::size_t>(i) % kMethods.size()];
    relay.CallAnswered(method, kCodes[static_cast<std::size_t>(i) % 3], Clock::now() - accepted);
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

  std::size_t idle_bytes = 0;
  std::size_t held_bytes = 0;
  const double idle_us = ScrapeWithHolders(0, &idle_bytes);
  const double held_us = ScrapeWithHolders(holders, &held_bytes);
  std::printf(
      "GPU series of 16 GPUs: %.0f us for %zu bytes with no holder | %.0f us for %zu bytes with "
      "%d holding containers | ratio %.1fx\n",
      idle_us, idle_bytes, held_us, held_bytes, holders, held_us / idle_us);
  return 0;
}
