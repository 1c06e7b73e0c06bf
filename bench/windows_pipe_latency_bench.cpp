// Added latency of a CRI Version call through the Windows dxshim.exe under wine, next to the Linux
// dxshim, both in front of the same real containerd and measured in one run with the three paths
// interleaved call by call:
//   direct       CRI client --unix--> containerd
//   linux        CRI client --unix--> dxshim --unix--> containerd
//   windows      CRI client --TCP--> pipe-relay.exe --\\.\pipe--> dxshim.exe --tcp--> containerd
// The Windows path has two more hops (the test's forwarder to the pipe, and dxshim.exe's bridge
// from the pipe to its gRPC server) and runs on wine, which is not Windows: the ratio is a guard
// against regressions of the pipe path, not a claim about Windows nodes.
//
// usage: windows_pipe_latency_bench [--calls N]   (needs scripts/build-windows.sh's dxshim.exe)
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/wine_dxshim.h"

namespace {

using namespace dxshim::test;
using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::stoi(argv[i + 1]);
  }
  TempDir dir;
  Containerd containerd(Containerd::Listen::kUnixAndTcp);
  DxshimProcess linux_dxshim(dir / "dxshim.sock", containerd.socket(), dir / "dxshim.log");
  std::printf("starting dxshim.exe under wine...\n");
  WineDxshim windows_dxshim(DXSHIM_WINDOWS_EXE, DXSHIM_PIPE_RELAY_EXE,
                            "tcp://" + containerd.tcp_address(), {});
  std::array<CriClient, 3> clients = {CriClient(containerd.socket()),
                                      CriClient(linux_dxshim.socket()),
                                      CriClient(DialTarget(windows_dxshim.pipe_target()))};
  const std::array<const char*, 3> names = {"direct", "linux dxshim", "dxshim.exe (wine)"};

  std::array<std::vector<double>, 3> samples;
  int failed = 0;
  for (int i = -200; i < calls; ++i) {  // the first 200 rounds warm up and are not counted
    for (std::size_t leg = 0; leg < 3; ++leg) {
      // Rotate which path goes first, so none always runs on a warmer cache.
      const std::size_t path = (leg + static_cast<std::size_t>(i + 200)) % 3;
      runtime::v1::VersionResponse response;
      const auto start = Clock::now();
      const bool ok = clients[path].Version(&response).ok();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      if (!ok) ++failed;
      if (i >= 0) samples[path].push_back(us);
    }
  }
  std::printf("Version, %d calls per path, paths interleaved; %d failed\n", calls, failed);
  const double direct_p50 = Percentile(samples[0], 0.5);
  for (std::size_t path = 0; path < 3; ++path) {
    const double p50 = Percentile(samples[path], 0.5), p99 = Percentile(samples[path], 0.99);
    std::printf("  %-18s p50 %8.1f us  p99 %8.1f us  added p50 %8.1f us\n", names[path], p50, p99,
                p50 - direct_p50);
  }
  const double linux_added = Percentile(samples[1], 0.5) - direct_p50;
  const double windows_added = Percentile(samples[2], 0.5) - direct_p50;
  std::printf("ratio of added p50, dxshim.exe under wine / linux dxshim: %.1fx\n",
              windows_added / linux_added);
  std::printf("dxshim.exe RSS after the run: %.1f MiB\n",
              static_cast<double>(windows_dxshim.RssKiB()) / 1024.0);
  const auto code = windows_dxshim.Stop();
  return failed == 0 && code == 0 ? 0 : 1;
}
