// One HTTP GET over real loopback TCP: the request line a server receives, the status and body of
// its answer, nothing when nothing listens or the answer is not HTTP; and the answer's parsing.
#include "shim/socket_bridge/http_get.h"

#include <gtest/gtest.h>

#include <thread>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {
namespace {

// Accepts one connection on `listener`, keeps what it sent in `request`, answers `reply`.
std::thread AnswerOnce(Socket& listener, std::string reply, std::string& request) {
  return std::thread([&listener, reply = std::move(reply), &request] {
    Socket client;
    while (!client.valid()) client = Accept(listener.get());
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const long n = Receive(client.get(), buffer, sizeof buffer);
      if (n <= 0) break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    Send(client.get(), reply.data(), reply.size());
  });
}

TEST(HttpGet, SendsOneRequestAndReadsTheStatusAndBody) {
  std::uint16_t port = 0;
  std::string error;
  auto listener = ListenTcp("127.0.0.1", 0, port, error);
  ASSERT_TRUE(listener.valid()) << error;
  std::string request;
  auto server = AnswerOnce(listener,
                           "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\n"
                           "the runtime is not connected\n",
                           request);
  const auto answer = HttpGet("127.0.0.1", port, "/readyz", std::chrono::seconds(5));
  server.join();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->body, "the runtime is not connected\n");
  EXPECT_EQ(request.rfind("GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n", 0), 0u) << request;
}

TEST(HttpGet, NothingListeningIsNoAnswer) {
  std::uint16_t port = 0;
  std::string error;
  {
    auto listener = ListenTcp("127.0.0.1", 0, port, error);  // a port that was free, closed again
    ASSERT_TRUE(listener.valid()) << error;
  }
  EXPECT_FALSE(HttpGet("127.0.0.1", port, "/healthz", std::chrono::seconds(2)).has_value());
  EXPECT_FALSE(ConnectTcp("127.0.0.1", port, std::chrono::seconds(2), error).valid());
  EXPECT_EQ(error.rfind("cannot connect to 127.0.0.1:" + std::to_string(port) + ": ", 0), 0u)
      << error;
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
