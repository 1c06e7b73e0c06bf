// One plain HTTP/1.0 GET over TCP, both platforms: what `dxshim install` proves kubelet's health
// with (/healthz) and `dxshim doctor` asks dxshim's metrics endpoint (/readyz).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dxshim::socket_bridge {

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// GET http://HOST:PORT/PATH; nullopt when the whole answer has not come within `timeout` (ended
// by the server, or as long as its Content-Length says), is longer than kMaxAnswerBytes, or is
// not HTTP. (On Windows, Winsock must be started: socket_api.h's NetworkSession.)
inline constexpr std::size_t kMaxAnswerBytes = 4u << 20;
std::optional<HttpAnswer> HttpGet(const std::string& host, std::uint16_t port,
                                  const std::string& path, std::chrono::milliseconds timeout);

// "HTTP/1.1 200 OK\r\n...\r\n\r\nbody": its status and body; nullopt for anything else.
std::optional<HttpAnswer> ParseHttpAnswer(const std::string& response);

}  // namespace dxshim::socket_bridge
