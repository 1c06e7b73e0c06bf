// dxshim's metrics endpoint against clients that misbehave, with a real containerd behind dxshim
// (linux target, one test GPU: a device node the test makes, see test_gpu.h; no GPU exists here):
// 200 connections from one address (127.0.0.2, over the per-address bound) and 300 more from ten
// others (127.0.0.3-12, 30 each: over the total bound) that send part of a request line and then
// nothing, then as many that ask for /metrics and never read, each crowd for 15 s and
// reconnecting whenever dxshim closes one; the probe comes from 127.0.0.1, as kubelet's comes
// from the node's address and not from a pod's. Throughout, /readyz and /metrics answer within a
// probe's 1 s timeout (kubelet's default timeoutSeconds), round after round, and CRI calls through
// dxshim (Version, ListContainers, a GPU pod's CreateContainer) succeed. dxshim keeps closing the
// silent connections (that crowd reconnects at least 500 more times) and counts every close in
// dxshim_http_refusals_total; it lets go of the never-reading connections while their clients
// still hold them (they cannot see the close); a client that trickles a request one byte every
// 100 ms gets its 408 at the request deadline, not later. After the crowds go away dxshim is back
// to the threads of its own and the file descriptors it had, and its log said at most one line
// per second about them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/http_clients.h"
#include "tests/support/http_get.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::size_t Entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// The names of a process' threads; dxshim's own threads (the relay's, the endpoint's) keep the
// program's name, gRPC names the threads of its pools (which it grows and shrinks by itself).
std::vector<std::string> ThreadNames(const std::string& pid) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + pid + "/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += n + " ";
  return joined;
}

// 200 clients from 127.0.0.2 and 30 from each of 127.0.0.3-12, all sending `request` and then
// nothing.
class Crowds {
 public:
  Crowds(int port, const std::string& request, bool small_receive_buffer) {
    crowds_.push_back(std::make_unique<ClientCrowd>("127.0.0.2", "127.0.0.1", port, request, 200,
                                                    small_receive_buffer));
    for (int i = 3; i <= 12; ++i) {
      crowds_.push_back(std::make_unique<ClientCrowd>("127.0.0." + std::to_string(i), "127.0.0.1",
                                                      port, request, 30, small_receive_buffer));
    }
  }
  std::size_t connects() const {
    std::size_t n = 0;
    for (const auto& c : crowds_) n += c->connects();
    return n;
  }

 private:
  std::vector<std::unique_ptr<ClientCrowd>> crowds_;
};

std::string Shown(const std::map<std::string, double>& counts) {
  std::string shown;
  for (const auto& [what, count] : counts) {
    shown += (shown.empty() ? "" : ", ") + std::to_string(static_cast<long>(count)) + " " + what;
  }
  return shown;
}

std::size_t Lines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

class SlowClients : public GpuNodeTest {
 protected:
  void SetUp() override {
    StartDxshim(1, {"--metrics-listen", "127.0.0.1:0", "--device-plugin", "false"});
    address_ = MetricsAddress(Log());
    ASSERT_NE(address_, "") << Log();
    port_ = std::stoi(address_.substr(address_.rfind(':') + 1));
    pid_ = std::to_string(dxshim_->process().pid());
    ASSERT_TRUE(WaitFor([&] { return HttpGet(address_, "/readyz").status == 200; }, seconds(30)))
        << HttpGet(address_, "/readyz").body;
  }

  // One round of what kubelet, Prometheus and the node's pods do: the probe, the scrape, and
  // two CRI calls through dxshim. Records what failed.
  void Round() {
    const auto readyz = HttpGet(address_, "/readyz", milliseconds(1000));
    if (readyz.status != 200) failures_.push_back("/readyz: " + readyz.body);
    const auto metrics = HttpGet(address_, "/metrics", milliseconds(1000));
    if (metrics.status != 200 || metrics.body.find("dxshim_build_info") == std::string::npos) {
      failures_.push_back("/metrics: " + std::to_string(metrics.status) + " " +
                          metrics.body.substr(0, 200));
    }
    v1::VersionResponse version;
    if (const auto s = client_->Version(&version, seconds(5)); !s.ok()) {
      failures_.push_back("Version: " + s.error_message());
    }
    std::string listed;
    const auto s =
        client_->Raw("/runtime.v1.RuntimeService/ListContainers",
                     v1::ListContainersRequest().SerializeAsString(), &listed, seconds(5));
    if (!s.ok()) failures_.push_back("ListContainers: " + s.error_message());
    ++rounds_;
  }

  // Rounds every 100 ms for `duration`.
  void Rounds(std::chrono::steady_clock::duration duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < until) {
      Round();
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  // dxshim_http_refusals_total by reason since the scrape `before`, which becomes the one now.
  // A scrape may be a second old (one rendering answers every scrape within a second): once
  // clients stop misbehaving, a scrape more than a second later has all they caused.
  std::map<std::string, double> RefusedSince(std::string& before) {
    std::this_thread::sleep_for(milliseconds(1100));
    const auto now = HttpGet(address_, "/metrics").body;
    std::map<std::string, double> refused;
    for (const auto* reason :
         {"request_timeout", "response_timeout", "per_address_limit", "total_limit", "fd_limit"}) {
      const auto in = [&](const std::string& text) {
        const auto n =
            Sample(text, "dxshim_http_refusals_total", {std::string("reason=\"") + reason + "\""});
        return std::isnan(n) ? 0 : n;
      };
      refused[reason] = in(now)-in(before);
    }
    before = now;
    return refused;
  }

  std::size_t OwnThreads() {
    const auto names = ThreadNames(pid_);
    return static_cast<std::size_t>(std::count(names.begin(), names.end(), "dxshim"));
  }
  std::size_t Fds() { return Entries("/proc/" + pid_ + "/fd"); }

  std::string address_;
  int port_ = 0;
  std::string pid_;
  int rounds_ = 0;
  std::vector<std::string> failures_;
};

TEST_F(SlowClients, DelayNoOneAndLeaveNothingBehind) {
  // A few rounds first, so that gRPC's and the endpoint's threads exist before counting them.
  for (int i = 0; i < 5; ++i) Round();
  ASSERT_TRUE(failures_.empty()) << failures_.front();
  const auto threads = OwnThreads();
  const auto fds = Fds();
  const auto names = Joined(ThreadNames(pid_));
  const auto log_before = Lines(Log(), "metrics endpoint:");
  const auto start = std::chrono::steady_clock::now();
  auto scraped = HttpGet(address_, "/metrics").body;

  // The silent crowd, and beside it a client from an address of its own (no bound closes it for
  // a newcomer) that sends a request one byte every 100 ms: whole after some 20 s, were it given
  // the time.
  std::size_t slow_connects = 0;
  std::string trickled;
  milliseconds trickle_took{0};
  {
    Crowds silent(port_, "GET /metrics HTTP/1.1\r\n", false);
    std::thread trickler([&] {
      RawConnection c("127.0.0.13", "127.0.0.1", port_);
      trickled =
          c.Trickle("GET /metrics HTTP/1.1\r\nUser-Agent: " + std::string(200, 't') + "\r\n\r\n",
                    milliseconds(100), &trickle_took);
    });
    Rounds(seconds(7));
    trickler.join();
    std::string id;  // a GPU pod created through dxshim while the crowd holds on
    const auto created = CreateAndStart(RunPod("gpu-during-crowd", true), &id);
    EXPECT_TRUE(created.ok()) << created.error_message() << "\n" << Log();
    Rounds(seconds(8));
    slow_connects = silent.connects();
  }
  const auto silent_refused = RefusedSince(scraped);

  std::size_t reader_connects = 0;
  std::size_t reader_fds = 0;
  {
    Crowds never_read(port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", true);
    Rounds(seconds(15));
    reader_connects = never_read.connects();
    reader_fds = Fds();  // the crowd still holds its connections
  }
  const auto reader_refused = RefusedSince(scraped);

  const auto elapsed =
      std::chrono::duration_cast<seconds>(std::chrono::steady_clock::now() - start).count();
  std::cout << rounds_ << " rounds in " << elapsed << " s; the silent crowd connected "
            << slow_connects << " times, the crowd that never reads " << reader_connects
            << " times; the trickled request was answered after " << trickle_took.count() << " ms\n"
            << "dxshim's refusals: " << Shown(silent_refused) << "; then " << Shown(reader_refused)
            << "\n";
  EXPECT_GE(rounds_, 100) << "the rounds themselves were not held up";
  for (const auto& f : failures_) ADD_FAILURE() << f;

  // dxshim closed silent connections over and over (its first 500 connections are the crowd's
  // own; each one more followed a close), and counted every close by its reason.
  EXPECT_GE(slow_connects, 1000u) << "dxshim did not close the silent connections";
  EXPECT_GE(silent_refused.at("total_limit"), 1);
  EXPECT_GE(silent_refused.at("request_timeout") + silent_refused.at("per_address_limit") +
                silent_refused.at("total_limit"),
            static_cast<double>(slow_connects - 500))
      << "the silent crowd saw closes that dxshim did not count";
  // The request deadline counts from the connection, not from the last byte: a trickled request
  // gets its 408 then (give or take a loaded 2-core machine's scheduling), not when it is whole.
  EXPECT_TRUE(trickled.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << trickled;
  EXPECT_GE(trickle_took, milliseconds(2000));
  EXPECT_LE(trickle_took, milliseconds(3500));

  // A client that never reads cannot see dxshim close (the end of the stream waits behind the
  // answer it does not take), so it never connects again: what dxshim does shows on its side.
  // Each answer handed over, it let go of all 500 while the crowd still held them, the bounds
  // closing some on the way (which bound, the order of arrival decides).
  EXPECT_LE(reader_fds, fds + 4) << "dxshim still held connections of clients that never read";
  EXPECT_GE(reader_refused.at("per_address_limit") + reader_refused.at("total_limit"), 1);

  // Everything the crowds opened is closed again, and no thread of dxshim's own was left behind.
  std::size_t now_threads = 0;
  std::size_t now_fds = 0;
  EXPECT_TRUE(WaitFor(
      [&] {
        now_threads = OwnThreads();
        now_fds = Fds();
        return now_threads <= threads && now_fds <= fds;
      },
      seconds(20)))
      << "dxshim's threads " << threads << " -> " << now_threads << ", fds " << fds << " -> "
      << now_fds << "\nthreads before: " << names
      << "\nthreads after: " << Joined(ThreadNames(pid_));

  // The log: at most one line a second about what the crowds did.
  const auto lines = Lines(Log(), "metrics endpoint:") - log_before;
  std::istringstream log(Log());
  int shown = 0;
  for (std::string line; std::getline(log, line) && shown < 3;) {
    if (line.find("metrics endpoint:") != std::string::npos) {
      std::cout << line << "\n";
      ++shown;
    }
  }
  EXPECT_GE(lines, 1u) << "the faults were told";
  EXPECT_LE(lines, static_cast<std::size_t>(elapsed) + 2) << Log();
}

}  // namespace
}  // namespace dxshim::test
