#include "tests/support/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <variant>

#include "shim/base/host_port.h"

namespace dxshim::test {
namespace {

// "HOST:PORT", HOST an IPv4 address or an IPv6 one in brackets; false when it is neither.
bool Resolve(const std::string& address, sockaddr_storage& to, socklen_t& size) {
  const auto parsed = ParseHostPort(address);
  const auto* where = std::get_if<HostPort>(&parsed);
  if (!where) return false;
  const auto port = htons(where->port);
  to = {};
  if (where->bracketed) {
    auto& v6 = reinterpret_cast<sockaddr_in6&>(to);
    v6.sin6_family = AF_INET6;
    v6.sin6_port = port;
    size = sizeof v6;
    return inet_pton(AF_INET6, where->host.c_str(), &v6.sin6_addr) == 1;
  }
  auto& v4 = reinterpret_cast<sockaddr_in&>(to);
  v4.sin_family = AF_INET;
  v4.sin_port = port;
  size = sizeof v4;
  return inet_pton(AF_INET, where->host.c_str(), &v4.sin_addr) == 1;
}

}  // namespace

HttpResponse HttpRequest(const std::string& address, const std::string& method,
                         const std::string& path, std::chrono::milliseconds timeout) {
  HttpResponse response;
  const auto start = std::chrono::steady_clock::now();
  sockaddr_storage to{};
  socklen_t size = 0;
  if (!Resolve(address, to, size)) {
    response.body = "not HOST:PORT: " + address;
    return response;
  }
  const int fd = ::socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // Connecting, sending and each read give up after `timeout`; the whole is checked at the end.
  const timeval wait{static_cast<time_t>(timeout.count() / 1000),
                     static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), size) != 0) {
    ::close(fd);
    response.body = "cannot connect to " + address;
    return response;
  }
  const auto request =
      method + " " + path + " HTTP/1.1\r\nHost: " + address + "\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    response.body = "cannot send to " + address;
    return response;
  }
  std::string raw;
  char buffer[16384];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (took > timeout) {
    response.body = "no answer from " + address + path + " within " +
                    std::to_string(timeout.count()) + " ms (took " + std::to_string(took.count()) +
                    " ms)";
    return response;
  }
  const auto end = raw.find("\r\n\r\n");
  if (!raw.starts_with("HTTP/1.") || end == std::string::npos) {
    response.body = "no HTTP answer from " + address + ": " + raw;
    return response;
  }
  std::istringstream head(raw.substr(0, end));
  std::string line;
  std::getline(head, line);
  response.status = std::atoi(line.substr(9, 3).c_str());
  while (std::getline(head, line)) {
    const auto sep = line.find(':');
    if (sep == std::string::npos) continue;
    auto name = line.substr(0, sep);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto value = line.substr(sep + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (!value.empty() && value.back() == '\r') value.pop_back();
    response.headers[name] = value;
  }
  response.body = raw.substr(end + 4);
  return response;
}

std::string MetricsAddress(const std::string& log) {
  const std::string marker = "metrics: serving http://";
  const auto at = log.rfind(marker);
  if (at == std::string::npos) return "";
  const auto start = at + marker.size();
  return log.substr(start, log.find('/', start) - start);
}

double Sample(const std::string& exposition, const std::string& name,
              const std::vector<std::string>& labels) {
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(name)) continue;
    const auto rest = line.substr(name.size());
    std::string label_set;
    std::string value;
    if (rest.starts_with("{")) {
      const auto close = rest.rfind('}');
      label_set = rest.substr(0, close + 1);
      value = rest.substr(close + 1);
    } else if (rest.starts_with(" ")) {
      value = rest;
    } else {
      continue;  // a longer name with this prefix
    }
    const bool all = std::all_of(labels.begin(), labels.end(), [&](const std::string& l) {
      return label_set.find(l) != std::string::npos;
    });
    if (all) return std::strtod(value.c_str(), nullptr);
  }
  return std::nan("");
}

}  // namespace dxshim::test
