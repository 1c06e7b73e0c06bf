// The metrics endpoint (shim/admin/http_endpoint.h) over real sockets: its answers and refusals
// (405 with Allow, 400, 431) each reported by its reason, a failing scrape as a 500, whatever its
// thread throws caught, /metrics rendered once for every scrape within its max age, its bounds
// (per address, in total with a tie between addresses going to the oldest connection, on a
// request that does not arrive and an answer not taken), and a [::] listener taking IPv4 clients
// even where the host's default is IPv6 only. With a containerd behind dxshim and crowds of
// misbehaving clients: tests/e2e/metrics_slow_clients_e2e_test.cpp; at the file-descriptor limit:
// tests/e2e/metrics_fd_limit_e2e_test.cpp.
#include "shim/admin/http_endpoint.h"

#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_clients.h"
#include "tests/support/http_get.h"
#include "tests/support/process.h"

namespace dxshim::admin {
namespace {

using std::chrono::milliseconds;

// What an endpoint reported refused, by reason (it reports on its own thread).
class Refusals {
 public:
  std::function<void(HttpRefusal)> Callback() {
    return [this](HttpRefusal refusal) {
      const std::lock_guard lock(mutex_);
      ++counts_[refusal];
    };
  }
  std::size_t Count(HttpRefusal refusal) {
    const std::lock_guard lock(mutex_);
    return counts_[refusal];
  }
  std::size_t Total() {
    const std::lock_guard lock(mutex_);
    std::size_t total = 0;
    for (const auto& [refusal, count] : counts_) total += count;
    return total;
  }
  // Waits (5 s at most) until `refusal` has been reported `count` times, then says whether that
  // is all that was reported.
  bool Exactly(HttpRefusal refusal, std::size_t count) {
    test::WaitFor([&] { return Count(refusal) >= count; }, std::chrono::seconds(5));
    return Count(refusal) == count && Total() == count;
  }

 private:
  std::mutex mutex_;
  std::map<HttpRefusal, std::size_t> counts_;
};

TEST(HttpEndpoint, AnswersAndRefuses) {
  std::vector<std::string> missing = {"runtime: not connected"};
  Refusals refusals;
  HttpHandlers handlers;
  handlers.metrics = [] { return std::string("dxshim_x 1\n"); };
  handlers.not_ready = [&] { return missing; };
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers);
  ASSERT_GT(endpoint.port(), 0);
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());
  EXPECT_EQ(test::HttpGet(at, "/metrics").body, "dxshim_x 1\n");
  auto r = test::HttpGet(at, "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready:\n  runtime: not connected\n");
  missing.clear();
  r = test::HttpGet(at, "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");
  EXPECT_EQ(test::HttpGet(at, "/healthz").body, "ok\n");
  EXPECT_EQ(test::HttpGet(at, "/metricsx").status, 404);
  EXPECT_EQ(refusals.Total(), 0u) << "answers, not refusals";
  r = test::HttpRequest(at, "DELETE", "/healthz");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET, HEAD");
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kMethodNotAllowed, 1));

  // A port in use: the error names the address.
  try {
    HttpEndpoint second(at, handlers);
    ADD_FAILURE() << "a second endpoint listened on " << at;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot serve metrics on " + at), std::string::npos)
        << e.what();
  }
}

TEST(HttpEndpoint, AFailingScrapeIsA500NotACrash) {
  Refusals refusals;
  HttpHandlers handlers;
  handlers.metrics = []() -> std::string { throw std::runtime_error("collector broke"); };
  handlers.not_ready = []() -> std::vector<std::string> { throw 42; };
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers);
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());
  auto r = test::HttpGet(at, "/metrics");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "collector broke\n");
  r = test::HttpGet(at, "/readyz");  // what it threw is no std::exception
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "the handler failed\n");
  EXPECT_EQ(test::HttpGet(at, "/healthz").status, 200);
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kInternalError, 2));
}

// Whatever the endpoint's thread meets (here the refusal callback throwing std::bad_alloc as
// each connection is closed for a bound, a malformed request, a request not arriving, a failing
// scrape) closes that connection at most: the endpoint goes on answering, and the process lives.
TEST(HttpEndpoint, WhatItsThreadThrowsEndsNeitherTheEndpointNorTheProcess) {
  std::atomic<int> thrown{0};
  HttpHandlers handlers;
  handlers.metrics = []() -> std::string { throw 42; };
  handlers.not_ready = [] { return std::vector<std::string>{}; };
  handlers.refused = [&](HttpRefusal) {
    ++thrown;
    throw std::bad_alloc();
  };
  HttpLimits limits;
  limits.max_per_peer = 1;
  limits.request_timeout = milliseconds(300);
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());
  test::RawConnection malformed("127.0.0.2", "127.0.0.1", endpoint.port());
  ASSERT_TRUE(malformed.Send("HELLO\r\n\r\n"));
  test::RawConnection silent("127.0.0.3", "127.0.0.1", endpoint.port());
  test::RawConnection held("127.0.0.4", "127.0.0.1", endpoint.port());
  ASSERT_TRUE(held.Send("GET /hea"));
  test::RawConnection displacing("127.0.0.4", "127.0.0.1", endpoint.port());
  EXPECT_EQ(test::HttpGet(at, "/metrics").status, 500);
  for (auto* c : {&malformed, &silent, &held, &displacing}) {
    bool closed = false;
    c->ReadUntilClosed(std::chrono::seconds(5), &closed);
    EXPECT_TRUE(closed);
  }
  EXPECT_GE(thrown.load(), 4) << "each of the four threw";
  EXPECT_EQ(test::HttpGet(at, "/healthz").status, 200);
}

HttpHandlers Fixed() {
  HttpHandlers handlers;
  handlers.metrics = [] { return std::string("dxshim_x 1\n"); };
  handlers.not_ready = [] { return std::vector<std::string>{}; };
  return handlers;
}

// Each of `connections` has sent part of a request line and nothing more.
std::vector<std::unique_ptr<test::RawConnection>> Silent(const std::string& source, int port,
                                                         int connections) {
  std::vector<std::unique_ptr<test::RawConnection>> silent;
  for (int i = 0; i < connections; ++i) {
    silent.push_back(std::make_unique<test::RawConnection>(source, "127.0.0.1", port));
    EXPECT_TRUE(silent.back()->Send("GET /metrics HTTP/1.1\r\n"));
  }
  return silent;
}

bool ClosedWithNothing(test::RawConnection& c) {
  bool closed = false;
  const auto got = c.ReadUntilClosed(std::chrono::seconds(5), &closed);
  return closed && got.empty();
}

TEST(HttpEndpoint, APeerOverItsLimitDisplacesItsOldestConnectionNotTheProbe) {
  HttpLimits limits;
  limits.max_per_peer = 4;
  Refusals refusals;
  auto handlers = Fixed();
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());
  auto silent = Silent("127.0.0.1", endpoint.port(), 4);
  // The probe comes from the same address as the silent ones: the oldest of them gives way.
  const auto r = test::HttpGet(at, "/healthz", std::chrono::seconds(1));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(ClosedWithNothing(*silent[0]));
  bool closed = true;
  silent[1]->ReadUntilClosed(milliseconds(200), &closed);
  EXPECT_FALSE(closed) << "only the oldest was closed";
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kPerAddressLimit, 1));
}

TEST(HttpEndpoint, OverTheTotalTheBusiestAddressGivesWay) {
  HttpLimits limits;
  limits.max_per_peer = 4;
  limits.max_connections = 6;
  Refusals refusals;
  auto handlers = Fixed();
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  auto few = Silent("127.0.0.3", endpoint.port(), 2);   // the oldest of all
  auto many = Silent("127.0.0.2", endpoint.port(), 4);  // the busiest address
  test::RawConnection probe("127.0.0.4", "127.0.0.1", endpoint.port());
  ASSERT_TRUE(probe.Send("GET /readyz HTTP/1.1\r\n\r\n"));
  bool closed = false;
  const auto answer = probe.ReadUntilClosed(std::chrono::seconds(1), &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(closed);
  EXPECT_TRUE(ClosedWithNothing(*many[0])) << "the oldest of the busiest address";
  few[0]->ReadUntilClosed(milliseconds(200), &closed);
  EXPECT_FALSE(closed) << "an address with fewer connections keeps them, old as they are";
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kTotalLimit, 1));
}

TEST(HttpEndpoint, OverTheTotalATieBetweenAddressesClosesTheOldestConnection) {
  HttpLimits limits;
  limits.max_connections = 4;
  HttpEndpoint endpoint("127.0.0.1:0", Fixed(), limits);
  // Two addresses hold two each; the one that sorts last holds the oldest connection.
  auto older = Silent("127.0.0.3", endpoint.port(), 2);
  auto newer = Silent("127.0.0.2", endpoint.port(), 2);
  test::RawConnection probe("127.0.0.4", "127.0.0.1", endpoint.port());
  ASSERT_TRUE(probe.Send("GET /healthz HTTP/1.1\r\n\r\n"));
  bool closed = false;
  const auto answer = probe.ReadUntilClosed(std::chrono::seconds(5), &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(ClosedWithNothing(*older[0])) << "the oldest connection gives way";
  newer[0]->ReadUntilClosed(milliseconds(200), &closed);
  EXPECT_FALSE(closed) << "not the oldest of the address that sorts first";
}

TEST(HttpEndpoint, MetricsAreRenderedOnceForEveryScrapeWithinTheirMaxAge) {
  std::atomic<int> renders{0};
  HttpHandlers handlers = Fixed();
  handlers.metrics = [&] { return "dxshim_renders " + std::to_string(++renders) + "\n"; };
  HttpLimits limits;
  limits.metrics_max_age = std::chrono::hours(1);
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  // Twenty scrapes at once, then a HEAD: one rendering answers them all.
  std::vector<std::unique_ptr<test::RawConnection>> scrapes;
  for (int i = 0; i < 20; ++i) {
    scrapes.push_back(
        std::make_unique<test::RawConnection>("127.0.0.1", "127.0.0.1", endpoint.port()));
    ASSERT_TRUE(scrapes.back()->Send("GET /metrics HTTP/1.1\r\n\r\n"));
  }
  for (auto& scrape : scrapes) {
    bool closed = false;
    const auto answer = scrape->ReadUntilClosed(std::chrono::seconds(10), &closed);
    EXPECT_TRUE(answer.ends_with("\r\n\r\ndxshim_renders 1\n")) << answer;
  }
  const auto at = "127.0.0.1:" + std::to_string(endpoint.port());
  auto head = test::HttpRequest(at, "HEAD", "/metrics");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], "17");
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(renders.load(), 1);

  // Once the rendering is older than the max age, the next scrape renders again.
  limits.metrics_max_age = milliseconds(200);
  renders = 0;
  HttpEndpoint shorter("127.0.0.1:0", handlers, limits);
  const auto there = "127.0.0.1:" + std::to_string(shorter.port());
  EXPECT_EQ(test::HttpGet(there, "/metrics").body, "dxshim_renders 1\n");
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(test::HttpGet(there, "/metrics").body, "dxshim_renders 2\n");
}

TEST(HttpEndpoint, ARequestThatDoesNotArriveIsAnswered408AndClosed) {
  HttpLimits limits;
  limits.request_timeout = milliseconds(300);
  Refusals refusals;
  auto handlers = Fixed();
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  test::RawConnection slow("127.0.0.1", "127.0.0.1", endpoint.port());
  ASSERT_TRUE(slow.Send("GET /metr"));
  bool closed = false;
  const auto answer = slow.ReadUntilClosed(std::chrono::seconds(10), &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << answer;
  EXPECT_TRUE(closed);
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kRequestTimeout, 1));
}

TEST(HttpEndpoint, AnAnswerNotTakenInTimeIsCutOff) {
  // 32 MiB: more than the kernel's socket buffers on both ends hold (4 MiB at most each here).
  const std::string big(32u << 20, 'x');
  HttpHandlers handlers = Fixed();
  handlers.metrics = [&] { return big; };
  Refusals refusals;
  handlers.refused = refusals.Callback();
  HttpLimits limits;
  limits.response_timeout = milliseconds(300);
  HttpEndpoint endpoint("127.0.0.1:0", handlers, limits);
  test::RawConnection slow("127.0.0.1", "127.0.0.1", endpoint.port(), 4096);
  ASSERT_TRUE(slow.Send("GET /metrics HTTP/1.1\r\n\r\n"));
  std::this_thread::sleep_for(milliseconds(1500));  // reading nothing meanwhile
  // Whatever was in the buffers arrives, then the end: the endpoint gave up on the rest.
  bool closed = false;
  const auto got = slow.ReadUntilClosed(std::chrono::seconds(30), &closed);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got.substr(0, 100);
  EXPECT_LT(got.size(), big.size()) << "the whole answer was taken after all";
  // Meanwhile others were answered.
  EXPECT_EQ(test::HttpGet("127.0.0.1:" + std::to_string(endpoint.port()), "/healthz").status, 200);
  EXPECT_TRUE(refusals.Exactly(HttpRefusal::kResponseTimeout, 1));
}

TEST(HttpEndpoint, MalformedAndOversizedRequestsAre400And431) {
  Refusals refusals;
  auto handlers = Fixed();
  handlers.refused = refusals.Callback();
  HttpEndpoint endpoint("127.0.0.1:0", handlers);
  const auto ask = [&](const std::string& request) {
    test::RawConnection c("127.0.0.1", "127.0.0.1", endpoint.port());
    c.Send(request);
    bool closed = false;
    return c.ReadUntilClosed(std::chrono::seconds(10), &closed);
  };
  auto answer = ask("HELLO\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 Bad Request\r\n")) << answer;
  EXPECT_NE(answer.find("not an HTTP request line: \"HELLO\""), std::string::npos) << answer;
  answer = ask("GET /metrics HTTP/1.1\r\nX-Big: " + std::string(10000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n")) << answer;
  EXPECT_NE(answer.find("the request head is over 8192 bytes"), std::string::npos) << answer;
  answer = ask("GET /metrics?name=x HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\ndxshim_x 1\n")) << answer;
  EXPECT_EQ(refusals.Count(HttpRefusal::kMalformed), 1u);
  EXPECT_EQ(refusals.Count(HttpRefusal::kTooLarge), 1u);
  EXPECT_EQ(refusals.Total(), 2u);
}

// A network namespace of the calling thread's own, with loopback up and `bindv6only` as the
// host's default for IPv6 sockets (1: IPv6 only, as on Windows); "" or why it cannot be made.
std::string OwnNetworkNamespace(const char* bindv6only) {
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("no network namespace of its own: ") + std::strerror(errno);
  }
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq loopback{};
  std::strncpy(loopback.ifr_name, "lo", IFNAMSIZ - 1);
  const bool up = s >= 0 && ::ioctl(s, SIOCGIFFLAGS, &loopback) == 0 &&
                  (loopback.ifr_flags |= IFF_UP, ::ioctl(s, SIOCSIFFLAGS, &loopback) == 0);
  if (s >= 0) ::close(s);
  if (!up) return std::string("loopback not up: ") + std::strerror(errno);
  std::ofstream("/proc/sys/net/ipv6/bindv6only") << bindv6only << "\n";
  std::ifstream check("/proc/sys/net/ipv6/bindv6only");
  std::string value;
  check >> value;
  return value == bindv6only ? "" : "net.ipv6.bindv6only not set";
}

// `[::]` means the same on every platform: IPv6 and IPv4 clients, even in a namespace whose
// default for IPv6 sockets is IPv6 only (Windows' default). The namespace belongs to one thread
// (unshare(CLONE_NEWNET) there), so the host and the other tests keep theirs.
TEST(HttpEndpoint, AnIpv6WildcardTakesIpv4ClientsWhateverTheHostDefault) {
  std::string skipped;
  std::thread([&] {
    skipped = OwnNetworkNamespace("1");
    if (!skipped.empty()) return;
    HttpEndpoint endpoint("[::]:0", Fixed());
    const auto port = std::to_string(endpoint.port());
    EXPECT_EQ(test::HttpGet("127.0.0.1:" + port, "/healthz").status, 200) << "over IPv4";
    EXPECT_EQ(test::HttpGet("[::1]:" + port, "/healthz").status, 200) << "over IPv6";
  }).join();
  if (!skipped.empty()) GTEST_SKIP() << skipped << " (needs CAP_SYS_ADMIN)";
}

}  // namespace
}  // namespace dxshim::admin
