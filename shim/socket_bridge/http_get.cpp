#include "shim/socket_bridge/http_get.h"

#include <cctype>
#include <cstdlib>

#include "shim/base/ascii_case.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

namespace {

// Whether `response` holds a whole answer although the server did not end its stream: headers
// and as many body bytes as its Content-Length says.
bool Complete(const std::string& response) {
  const auto split = response.find("\r\n\r\n");
  if (split == std::string::npos) return false;
  const std::string headers = ToLowerAscii(std::string_view(response).substr(0, split));
  const auto at = headers.find("\r\ncontent-length:");
  if (at == std::string::npos) return false;
  const auto length = std::strtoull(headers.c_str() + at + 17, nullptr, 10);
  return response.size() - split - 4 >= length;
}

}  // namespace

std::optional<HttpAnswer> ParseHttpAnswer(const std::string& response) {
  if (response.rfind("HTTP/", 0) != 0) return std::nullopt;
  const auto space = response.find(' ');
  const auto split = response.find("\r\n\r\n");
  if (space == std::string::npos || split == std::string::npos) return std::nullopt;
  HttpAnswer answer;
  answer.status = std::atoi(response.c_str() + space + 1);
  answer.body = response.substr(split + 4);
  return answer;
}

std::optional<HttpAnswer> HttpGet(const std::string& host, std::uint16_t port,
                                  const std::string& path, std::chrono::milliseconds timeout) {
  // One deadline for all of it: a server that trickles its answer does not hold the caller.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto wait = [&deadline](NativeSocket s, bool write) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    PollEntry entry{s, !write, write, false, false};
    return left.count() > 0 && Poll(std::span(&entry, 1), left) &&
           (write ? entry.writable : entry.readable);
  };
  std::string error;
  const auto s = ConnectTcp(host, port, timeout, error);
  if (!s.valid()) return std::nullopt;
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  for (std::size_t sent = 0; sent < request.size();) {
    if (!wait(s.get(), true)) return std::nullopt;
    const long n = Send(s.get(), request.data() + sent, request.size() - sent);
    if (n < 0 && !LastCallWouldBlock()) return std::nullopt;
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string response;
  char buffer[16384];
  while (true) {
    // The deadline, or a reset: an answer already whole still counts.
    if (!wait(s.get(), false)) return Complete(response) ? ParseHttpAnswer(response) : std::nullopt;
    const long n = Receive(s.get(), buffer, sizeof buffer);
    if (n == 0) break;  // the server ended the answer
    if (n < 0 && !LastCallWouldBlock()) {
      return Complete(response) ? ParseHttpAnswer(response) : std::nullopt;
    }
    if (n > 0) response.append(buffer, static_cast<std::size_t>(n));
    if (response.size() > kMaxAnswerBytes) return std::nullopt;  // never a cut-off body
  }
  return ParseHttpAnswer(response);
}

}  // namespace dxshim::socket_bridge
