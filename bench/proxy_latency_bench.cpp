// Added latency of a unary CRI call through dxshim versus the same call made directly to a real
// containerd, measured in one run with the two paths interleaved call by call (so both see the
// same machine load), plus dxshim's resident memory afterwards. Two dxshims are measured in the
// same run: one serving kubelet's device plugin API to a test kubelet (registered, ListAndWatch
// open: what a node runs) and one with --device-plugin false, so that the plugin's cost on the
// relay path shows as a ratio. The same for metrics: a dxshim with --metrics-listen against one
// without, in front of containerd and of a minimal C++ runtime, with the CPU time each dxshim
// spent per call (from schedstat, all its threads), a control pair of two dxshims without
// metrics (how far two processes doing the same work differ), and what a scrape costs.
//
// usage: proxy_latency_bench [--calls N] [--containers N]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/fake_runtime.h"
#include "tests/support/http_get.h"
#include "tests/support/read_file.h"
#include "tests/support/test_kubelet.h"

namespace {

using namespace dxshim::test;
namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

struct Percentiles {
  double p50_us, p99_us;
};

Percentiles Summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1));
    return samples[i];
  };
  return {at(0.50), at(0.99)};
}

// Voluntary plus involuntary context switches of all threads of `pid` so far.
long ContextSwitches(pid_t pid) {
  long total = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("ctxt_switches:") != std::string::npos) {
        total += std::stol(line.substr(line.find(':') + 1));
      }
    }
  }
  return total;
}

// CPU time of all threads of `pid` so far, in nanoseconds (schedstat: exact, not in ticks).
double CpuNs(pid_t pid) {
  double total = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "schedstat");
    double on_cpu = 0;
    if (in >> on_cpu) total += on_cpu;
  }
  return total;
}

// `direct_pid`: when the "direct" leg is another dxshim, its pid, to compare CPU per call too.
template <typename Call>
Percentiles Measure(const char* name, int calls, Call&& call, CriClient& direct, CriClient& proxied,
                    pid_t dxshim_pid, const char* direct_name = "direct",
                    const char* proxied_name = "dxshim", pid_t direct_pid = -1) {
  for (int i = 0; i < 200; ++i) {  // warm both connections and caches
    call(direct);
    call(proxied);
  }
  const long switches_before = ContextSwitches(dxshim_pid);
  const double cpu_before = CpuNs(dxshim_pid);
  const double direct_cpu_before = direct_pid > 0 ? CpuNs(direct_pid) : 0;
  std::vector<double> d, p;
  d.reserve(static_cast<std::size_t>(calls));
  p.reserve(static_cast<std::size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    for (int leg = 0; leg < 2; ++leg) {
      // Alternate which path goes first, so neither always runs on a warmer cache.
      const bool via_proxy = (leg == 0) == (i % 2 == 0);
      const auto start = Clock::now();
      call(via_proxy ? proxied : direct);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      (via_proxy ? p : d).push_back(us);
    }
  }
  const double switches =
      static_cast<double>(ContextSwitches(dxshim_pid) - switches_before) / calls;
  const double cpu_us = (CpuNs(dxshim_pid) - cpu_before) / 1000.0 / calls;
  const auto sd = Summarize(d), sp = Summarize(p);
  std::printf(
      "%-22s %s p50 %7.1f us p99 %7.1f us | %s p50 %7.1f us p99 %7.1f us | "
      "added p50 %6.1f us | ratio p50 %.3fx p99 %.3fx | dxshim context switches/call %.1f\n",
      name, direct_name, sd.p50_us, sd.p99_us, proxied_name, sp.p50_us, sp.p99_us,
      sp.p50_us - sd.p50_us, sp.p50_us / sd.p50_us, sp.p99_us / sd.p99_us, switches);
  if (direct_pid > 0) {
    const double direct_cpu_us = (CpuNs(direct_pid) - direct_cpu_before) / 1000.0 / calls;
    std::printf("%-22s dxshim CPU per call: %s %.2f us, %s %.2f us, added %.2f us (ratio %.3fx)\n",
                "", direct_name, direct_cpu_us, proxied_name, cpu_us, cpu_us - direct_cpu_us,
                cpu_us / direct_cpu_us);
  }
  return sp;
}

double RssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

// The RSS of `parent`'s children (the device plugin process serve runs).
double ChildrenRssMiB(pid_t parent) {
  double total = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    if (!(in >> pid >> comm >> state >> ppid) || ppid != parent) continue;
    total += RssMiB(std::stoi(pid));
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  int containers = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::stoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--containers") == 0) containers = std::stoi(argv[i + 1]);
  }
  TempDir dir;
  Containerd containerd;
  std::filesystem::create_directories(dir / "device-plugins");
  TestKubelet kubelet(dir / "device-plugins");
  const std::string inventory =
      "inventory:" DXSHIM_SOURCE_DIR "/deploy/examples/inventories/hetero-node.yaml";
  DxshimProcess dxshim(dir / "dxshim.sock", containerd.socket(), dir / "dxshim.log",
                       {"--device-source", inventory, "--device-plugin-dir", dir / "device-plugins",
                        "--max-containers-per-device", "4"});
  DxshimProcess no_plugin(dir / "dxshim-no-plugin.sock", containerd.socket(),
                          dir / "dxshim-no-plugin.log",
                          {"--device-source", inventory, "--device-plugin", "false"});
  CriClient direct(containerd.socket());
  CriClient proxied(dxshim.socket());
  CriClient proxied_no_plugin(no_plugin.socket());
  const auto list = kubelet.WaitForDevices(
      [](const std::vector<v1beta1::Device>& d) { return !d.empty(); }, std::chrono::seconds(30));
  if (!list) {
    std::fprintf(stderr, "the device plugin did not register with the test kubelet\n");
    return 1;
  }
  std::printf("device plugin: registered, kubelet watching %zu device(s)\n", list->size());

  std::printf("setting up: 1 pod with %d containers in a real containerd...\n", containers);
  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod("bench", "uid-bench", dir / "logs");
  v1::RunPodSandboxResponse pod;
  if (!direct.runtime->RunPodSandbox(Deadline(std::chrono::seconds(60)).get(), run, &pod).ok()) {
    std::fprintf(stderr, "RunPodSandbox failed\n");
    return 1;
  }
  for (int i = 0; i < containers; ++i) {
    v1::CreateContainerRequest create;
    create.set_pod_sandbox_id(pod.pod_sandbox_id());
    *create.mutable_config() = SleepingBusybox("c" + std::to_string(i));
    *create.mutable_sandbox_config() = run.config();
    v1::CreateContainerResponse created;
    const auto s =
        direct.runtime->CreateContainer(Deadline(std::chrono::seconds(60)).get(), create, &created);
    if (!s.ok()) {
      std::fprintf(stderr, "CreateContainer failed: %s\n", s.error_message().c_str());
      return 1;
    }
  }

  std::printf("%d calls per path, paths interleaved\n", calls);
  const auto version = [](CriClient& c) {
    v1::VersionResponse r;
    c.Version(&r);
  };
  std::size_t listed = 0;
  const auto list_containers = [&](CriClient& c) {
    v1::ListContainersResponse r;
    c.runtime->ListContainers(Deadline(std::chrono::seconds(10)).get(), {}, &r);
    listed = static_cast<std::size_t>(r.containers_size());
  };
  const std::string list_name = "ListContainers(" + std::to_string(containers) + ")";
  Measure("Version", calls, version, direct, proxied, dxshim.process().pid());
  Measure(list_name.c_str(), calls, list_containers, direct, proxied, dxshim.process().pid());
  // The device plugin's cost on the relay: the two dxshims interleaved call by call.
  Measure("Version", calls, version, proxied_no_plugin, proxied, dxshim.process().pid(),
          "no plugin", "plugin");
  Measure(list_name.c_str(), calls, list_containers, proxied_no_plugin, proxied,
          dxshim.process().pid(), "no plugin", "plugin");
  std::printf("ListContainers returned %zu containers\n", listed);
  // The metrics' cost on the relay: no plugin either way, metrics off against on.
  DxshimProcess metrics(dir / "dxshim-metrics.sock", containerd.socket(),
                        dir / "dxshim-metrics.log",
                        {"--device-source", inventory, "--device-plugin", "false",
                         "--metrics-listen", "127.0.0.1:0"});
  CriClient proxied_metrics(metrics.socket());
  Measure("Version", calls, version, proxied_no_plugin, proxied_metrics, metrics.process().pid(),
          "no metrics", "metrics", no_plugin.process().pid());

  // The same proxy in front of a minimal C++ gRPC server, to separate dxshim's own cost from
  // containerd's: here the runtime answers in a few microseconds.
  FakeRuntime fake(dir / "fake.sock");
  DxshimProcess fake_dxshim(dir / "dxshim-fake.sock", fake.socket(), dir / "dxshim-fake.log");
  CriClient fake_direct(fake.socket());
  CriClient fake_proxied(fake_dxshim.socket());
  Measure("Version (C++ runtime)", calls, version, fake_direct, fake_proxied,
          fake_dxshim.process().pid());
  DxshimProcess fake_metrics(dir / "dxshim-fake-metrics.sock", fake.socket(),
                             dir / "dxshim-fake-metrics.log", {"--metrics-listen", "127.0.0.1:0"});
  CriClient fake_proxied_metrics(fake_metrics.socket());
  Measure("Version (C++ runtime)", calls, version, fake_proxied, fake_proxied_metrics,
          fake_metrics.process().pid(), "no metrics", "metrics", fake_dxshim.process().pid());
  // The control: a second dxshim without metrics against the first, to show how far two
  // processes doing the same work differ in these numbers.
  DxshimProcess fake_control(dir / "dxshim-fake-control.sock", fake.socket(),
                             dir / "dxshim-fake-control.log");
  CriClient fake_proxied_control(fake_control.socket());
  Measure("Version (C++ runtime)", calls, version, fake_proxied, fake_proxied_control,
          fake_control.process().pid(), "no metrics", "control", fake_dxshim.process().pid());
  // A scrape (off the relay path): the metrics dxshim in front of containerd, after the runs.
  const auto address = MetricsAddress(ReadFile(dir / "dxshim-metrics.log"));
  std::vector<double> scrapes;
  std::size_t bytes = 0;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    bytes = HttpGet(address, "/metrics").body.size();
    scrapes.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  const auto scrape = Summarize(scrapes);
  std::printf("GET /metrics: %zu bytes, p50 %.0f us p99 %.0f us (200 scrapes)\n", bytes,
              scrape.p50_us, scrape.p99_us);
  std::printf(
      "dxshim RSS after the run: %.1f MiB with the device plugin (+ %.1f MiB its process), "
      "%.1f MiB without\n",
      RssMiB(dxshim.process().pid()), ChildrenRssMiB(dxshim.process().pid()),
      RssMiB(no_plugin.process().pid()));
  direct.RemovePod(pod.pod_sandbox_id());
  const bool stopped = no_plugin.Stop() == 0 && metrics.Stop() == 0 && fake_metrics.Stop() == 0 &&
                       fake_control.Stop() == 0;
  return dxshim.Stop() == 0 && stopped ? 0 : 1;
}
