// dxshim's metrics endpoint at the file-descriptor limit, with a real containerd behind dxshim
// (linux target, one test GPU: a device node the test makes, see test_gpu.h; no GPU exists here).
// The test lowers the running dxshim's RLIMIT_NOFILE (prlimit(2)), so that accepting a connection
// fails with EMFILE, in two ways: a crowd of clients that never finish a request holds what is
// left (the endpoint's own connections fill the limit), and a limit below what dxshim already
// holds (the descriptors are held elsewhere, the endpoint holds none). At the limit dxshim's CPU
// time stays well below the wall time (it does not spin on a listener that stays readable), the
// log and dxshim_http_refusals_total{reason="fd_limit"} tell it, and the probe answers again once
// the crowd leaves or the limit is raised.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/gpu_node.h"
#include "tests/support/http_clients.h"
#include "tests/support/http_get.h"
#include "tests/support/process_stats.h"

namespace dxshim::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// In a UBSan build (UBSAN_OPTIONS set by scripts/test-sanitizers.sh), the dxshim children run with
// tests/sanitizers/ubsan-fd-limit.supp: at the descriptor limit this test sets, clang's runtime
// reports valid objects as having an invalid vptr (the file says why). Set before main(), while
// the test is the only thread; the test's own process never runs out of descriptors.
const bool kUbsanSuppressions = [] {
  const char* options = std::getenv("UBSAN_OPTIONS");
  if (options == nullptr) return false;
  const std::string with = std::string(options) + ":suppressions=" DXSHIM_SOURCE_DIR
                                                  "/tests/sanitizers/ubsan-fd-limit.supp";
  return ::setenv("UBSAN_OPTIONS", with.c_str(), 1) == 0;
}();

// A spinning core uses the whole window (half of it on a loaded 2-core machine); an idle endpoint,
// a few per cent at most.
constexpr double kMaxCpuShare = 0.25;
constexpr auto kWindow = seconds(4);

class FdLimit : public GpuNodeTest {
 protected:
  void SetUp() override {
    StartDxshim(1, {"--metrics-listen", "127.0.0.1:0", "--device-plugin", "false"});
    address_ = MetricsAddress(Log());
    ASSERT_NE(address_, "") << Log();
    port_ = std::stoi(address_.substr(address_.rfind(':') + 1));
    pid_ = dxshim_->process().pid();
    ASSERT_TRUE(WaitFor([&] { return HttpGet(address_, "/readyz").status == 200; }, seconds(30)))
        << HttpGet(address_, "/readyz").body;
    ASSERT_EQ(::prlimit(pid_, RLIMIT_NOFILE, nullptr, &original_), 0);
  }

  // dxshim may open descriptors below `soft` only.
  void Limit(rlim_t soft) {
    rlimit limit = original_;
    limit.rlim_cur = soft;
    ASSERT_EQ(::prlimit(pid_, RLIMIT_NOFILE, &limit, nullptr), 0);
  }
  void Unlimit() { ASSERT_EQ(::prlimit(pid_, RLIMIT_NOFILE, &original_, nullptr), 0); }
  // Leaves dxshim no descriptor to open: the limit is its lowest free one, once that stays put
  // (the endpoint's connection of a probe just answered may still be closing).
  void LimitToWhatItHolds() {
    for (int attempt = 0; attempt < 50; ++attempt) {
      const auto lowest = LowestFreeFd(pid_);
      Limit(static_cast<rlim_t>(lowest));
      std::this_thread::sleep_for(milliseconds(100));
      if (LowestFreeFd(pid_) == lowest) return;
    }
    FAIL() << "dxshim's descriptors did not settle";
  }

  // dxshim's CPU seconds over kWindow, printed as the share of the window.
  double CpuOverWindow(const std::string& what) const {
    const auto cpu = CpuSeconds(pid_);
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kWindow);
    const auto used = CpuSeconds(pid_) - cpu;
    const auto wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
    std::cout << what << ": dxshim used " << used << " s of CPU in " << wall.count() << " s\n";
    return used / wall.count();
  }

  std::string address_;
  int port_ = 0;
  pid_t pid_ = -1;
  rlimit original_{};
};

TEST_F(FdLimit, ACrowdHoldingTheLastDescriptorsCostsNoCpuAndTheProbeAnswersOnceItLeaves) {
  // 24 descriptors left, and 120 clients from ten addresses (within the endpoint's own bounds,
  // which then never act) that send part of a request and hold on.
  const auto limit = static_cast<rlim_t>(LowestFreeFd(pid_)) + 24;
  Limit(limit);
  std::vector<std::unique_ptr<ClientCrowd>> crowd;
  for (int i = 2; i <= 11; ++i) {
    crowd.push_back(std::make_unique<ClientCrowd>("127.0.0." + std::to_string(i), "127.0.0.1",
                                                  port_, "GET /metrics HTTP/1.1\r\n", 12, false));
  }
  EXPECT_TRUE(WaitFor([&] { return LowestFreeFd(pid_) >= static_cast<int>(limit); }, seconds(20)))
      << "dxshim did not reach its limit of " << limit << " descriptors: " << OpenFds(pid_);
  const auto share = CpuOverWindow("a crowd at the descriptor limit");
  EXPECT_LT(share, kMaxCpuShare) << "the endpoint spins at the descriptor limit";

  crowd.clear();  // every client closes its connections
  EXPECT_TRUE(
      WaitFor([&] { return HttpGet(address_, "/readyz", seconds(1)).status == 200; }, seconds(15)))
      << "no answer after the crowd left: " << HttpGet(address_, "/readyz", seconds(1)).body;
  Unlimit();
  const auto log = Log();
  const auto told = log.find("for want of file descriptors");
  ASSERT_NE(told, std::string::npos) << "the log does not say the endpoint ran out of "
                                        "descriptors:\n"
                                     << log;
  const auto line = log.rfind('\n', told) + 1;
  std::cout << log.substr(line, log.find('\n', told) - line) << "\n";
  const auto metrics = HttpGet(address_, "/metrics");
  EXPECT_GE(Sample(metrics.body, "dxshim_http_refusals_total", {"reason=\"fd_limit\""}), 1)
      << metrics.body;
}

TEST_F(FdLimit, DescriptorsHeldElsewhereCostNoCpuAndTheProbeAnswersOnceTheyAreFree) {
  // Not one descriptor left, the endpoint holding none of them; a probe waits to be accepted.
  ASSERT_NO_FATAL_FAILURE(LimitToWhatItHolds());
  RawConnection probe("127.0.0.1", "127.0.0.1", port_);
  ASSERT_TRUE(probe.Send("GET /readyz HTTP/1.1\r\n\r\n"))
      << "the probe could not connect or send; dxshim's log:\n"
      << Log();
  const auto share = CpuOverWindow("no descriptor left, a probe waiting");
  EXPECT_LT(share, kMaxCpuShare) << "the endpoint spins at the descriptor limit";

  Unlimit();
  bool closed = false;
  const auto answer = probe.ReadUntilClosed(seconds(5), &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace dxshim::test
