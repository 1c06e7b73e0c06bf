// The TCP parts of socket_api.h whose calls are spelled the same in Winsock and POSIX
// (getaddrinfo, bind, connect, select, getsockname, getpeername, inet_ntop); the headers, the
// address-reuse options and a non-blocking connect's error differ, behind socket_calls.h.
#include "native_net.h"  // windows/ or posix/, by CMake
#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/socket_calls.h"

namespace dxshim::socket_bridge {
namespace {

std::uint16_t PortOf(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return 0;
}

// Whether a non-blocking connect ended (either way: SO_ERROR says how) within `timeout`. select,
// not WSAPoll: before Windows 10 2004, WSAPoll never reports a connect that failed.
bool ConnectFinished(NativeSocket s, std::chrono::milliseconds timeout) {
  // A POSIX socket number at or past FD_SETSIZE has no place in an fd_set: refused before FD_SET.
  const auto width = SelectWidth(s);
  if (!width) return false;
  fd_set writable;
  fd_set failed;
  FD_ZERO(&writable);
  FD_ZERO(&failed);
  FD_SET(s, &writable);
  FD_SET(s, &failed);
  timeval wait{};
  wait.tv_sec = static_cast<decltype(wait.tv_sec)>(timeout.count() / 1000);
  wait.tv_usec = static_cast<decltype(wait.tv_usec)>((timeout.count() % 1000) * 1000);
  return select(*width, nullptr, &writable, &failed, &wait) > 0;
}

}  // namespace

Socket ListenTcp(const std::string& host, std::uint16_t port, std::uint16_t& bound_port,
                 std::string& error) {
  const auto where =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    error = "cannot listen on " + where + ": not a numeric IP address";
    return {};
  }
  Socket s(OpenSocket(found->ai_family, found->ai_socktype, found->ai_protocol));
  // An IPv6 socket takes IPv4 clients too, on every platform: IPV6_V6ONLY defaults to on in
  // Windows and to net.ipv6.bindv6only (usually off) on Linux, so `[::]` is spelled out.
  const int off = 0;
  const bool ok =
      // No other process may take the port while dxshim listens on it, and a restarted dxshim
      // listens again at once, past the old connections' TIME_WAIT.
      s.valid() && KeepPortExclusive(s.get()) && ReuseTimeWaitPort(s.get()) &&
      (found->ai_family != AF_INET6 ||
       setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, reinterpret_cast<const char*>(&off),
                  sizeof off) == 0) &&
      bind(s.get(), found->ai_addr, static_cast<socklen_t>(found->ai_addrlen)) == 0 &&
      listen(s.get(), SOMAXCONN) == 0;
  freeaddrinfo(found);
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (!ok || getsockname(s.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    error = "cannot listen on " + where + ": " + LastSocketError();
    return {};
  }
  bound_port = PortOf(address);
  return s;
}

Socket ConnectTcp(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout,
                  std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    error = "cannot resolve " + host;
    return {};
  }
  Socket connected;
  error = "cannot connect to " + where + ": timed out";
  std::size_t left_addresses = 0;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) ++left_addresses;
  for (const addrinfo* a = found; a != nullptr && !connected.valid();
       a = a->ai_next, --left_addresses) {
    Socket s(OpenSocket(a->ai_family, a->ai_socktype, a->ai_protocol));
    // Non-blocking, so that the connection waits no longer than the deadline (a blocking
    // connect() can take 21 s on Windows whatever the socket's timeouts say).
    if (!s.valid() || !SetNonBlocking(s.get())) continue;
    if (connect(s.get(), a->ai_addr, static_cast<socklen_t>(a->ai_addrlen)) != 0) {
      if (!LastConnectPending()) {
        error = "cannot connect to " + where + ": " + LastSocketError();
        continue;
      }
      // Each address left gets its share of the time left (localhost: ::1, then 127.0.0.1).
      const auto share = std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now()) /
                         static_cast<long>(left_addresses);
      if (share.count() <= 0 || !ConnectFinished(s.get(), share)) continue;
      int result = 0;
      socklen_t size = sizeof result;
      if (getsockopt(s.get(), SOL_SOCKET, SO_ERROR, reinterpret_cast<char*>(&result), &size) != 0 ||
          result != 0) {
        error = "cannot connect to " + where + ": refused or unreachable";
        continue;
      }
    }
    connected = std::move(s);
  }
  freeaddrinfo(found);
  return connected;
}

std::string PeerAddress(NativeSocket s) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (getpeername(s, reinterpret_cast<sockaddr*>(&address), &size) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = nullptr;
  if (address.ss_family == AF_INET) {
    raw = &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr;
  } else if (address.ss_family == AF_INET6) {
    raw = &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr;
  }
  if (raw == nullptr || inet_ntop(address.ss_family, raw, text, sizeof text) == nullptr) return {};
  return text;
}

}  // namespace dxshim::socket_bridge
