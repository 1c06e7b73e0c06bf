// One HTTP GET over real loopback TCP: the request line a server receives, the status and body of
// its answer (also when the server keeps the connection open after a whole answer), nothing when
// nothing listens, when a server never answers, when an answer is longer than the limit, or when
// it is not HTTP; and the answer's parsing. Results only: no assertion on time.
#include "shim/socket_bridge/http_get.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {
namespace {

// A server on 127.0.0.1 that accepts one connection, keeps what it received until the request's
// end in `request`, sends `reply`, and closes it only if `close`; it gives up after 10 s.
class OneAnswer {
 public:
  OneAnswer(std::string reply, bool close) {
    std::string error;
    listener_ = ListenLoopback(port_, error);
    EXPECT_TRUE(listener_.valid()) << error;
    SetNonBlocking(listener_.get());
    thread_ = std::thread([this, reply = std::move(reply), close] {
      Socket client;
      for (int i = 0; i < 1000 && !client.valid() && !stop_; ++i) {
        PollEntry entry{listener_.get(), true, false, false, false};
        Poll(std::span(&entry, 1), std::chrono::milliseconds(10));
        client = Accept(listener_.get());
      }
      if (!client.valid()) return;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos && !stop_) {
        PollEntry entry{client.get(), true, false, false, false};
        Poll(std::span(&entry, 1), std::chrono::milliseconds(10));
        const long n = Receive(client.get(), buffer, sizeof buffer);
        if (n == 0 || (n < 0 && !LastCallWouldBlock())) break;
        if (n > 0) request.append(buffer, static_cast<std::size_t>(n));
      }
      for (std::size_t sent = 0; sent < reply.size() && !stop_;) {
        const long n = Send(client.get(), reply.data() + sent, reply.size() - sent);
        if (n > 0) sent += static_cast<std::size_t>(n);
        if (n < 0 && !LastCallWouldBlock()) break;
      }
      while (!close && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    });
  }
  ~OneAnswer() {
    stop_ = true;
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  std::string request;

 private:
  std::uint16_t port_ = 0;
  Socket listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(HttpGet, SendsOneRequestAndReadsTheStatusAndBody) {
  OneAnswer server(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\n"
      "the runtime is not connected\n",
      /*close=*/true);
  const auto answer = HttpGet("127.0.0.1", server.port(), "/readyz", std::chrono::seconds(5));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->body, "the runtime is not connected\n");
}

TEST(HttpGet, AWholeAnswerCountsWhenTheServerKeepsTheConnection) {
  OneAnswer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", /*close=*/false);
  const auto answer = HttpGet("127.0.0.1", server.port(), "/healthz", std::chrono::seconds(1));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "ok");
}

TEST(HttpGet, NoWholeAnswerIsNoAnswer) {
  // Headers, then silence: the deadline ends it.
  OneAnswer silent("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", /*close=*/false);
  EXPECT_FALSE(HttpGet("127.0.0.1", silent.port(), "/readyz", std::chrono::seconds(1)));
  // Longer than the limit.
  OneAnswer huge("HTTP/1.1 200 OK\r\n\r\n" + std::string(kMaxAnswerBytes + 1, 'x'),
                 /*close=*/true);
  EXPECT_FALSE(HttpGet("127.0.0.1", huge.port(), "/metrics", std::chrono::seconds(20)));
  // Not HTTP.
  OneAnswer ssh("SSH-2.0-OpenSSH_9.2\r\n", /*close=*/true);
  EXPECT_FALSE(HttpGet("127.0.0.1", ssh.port(), "/", std::chrono::seconds(5)));
}

TEST(HttpGet, NothingListeningIsNoAnswer) {
  std::uint16_t port = 0;
  std::string error;
  {
    auto listener = ListenLoopback(port, error);  // a port that was free, closed again
    ASSERT_TRUE(listener.valid()) << error;
  }
  EXPECT_FALSE(HttpGet("127.0.0.1", port, "/healthz", std::chrono::seconds(2)).has_value());
  EXPECT_FALSE(ConnectTcp("127.0.0.1", port, std::chrono::seconds(2), error).valid());
  EXPECT_EQ(error,
            "cannot connect to 127.0.0.1:" + std::to_string(port) + ": refused or unreachable")
      << error;
}

TEST(HttpGet, TheRequestIsOneGet) {
  OneAnswer server("HTTP/1.0 204 No Content\r\n\r\n", /*close=*/true);
  ASSERT_TRUE(HttpGet("localhost", server.port(), "/readyz", std::chrono::seconds(5)));
  // localhost may be ::1 first: the next address (127.0.0.1) still got its turn.
  EXPECT_EQ(server.request.rfind("GET /readyz HTTP/1.0\r\nHost: localhost\r\n", 0), 0u)
      << server.request;
}

TEST(ParseHttpAnswer, TakesTheStatusAndTheBodyOfAnHttpAnswerOnly) {
  const auto ok = ParseHttpAnswer("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok");
  EXPECT_FALSE(ParseHttpAnswer("").has_value());
  EXPECT_FALSE(ParseHttpAnswer("SSH-2.0-OpenSSH\r\n").has_value());
  EXPECT_FALSE(ParseHttpAnswer("HTTP/1.1 200 OK\r\nno end of headers").has_value());
}

}  // namespace
}  // namespace dxshim::socket_bridge
