// The local parts of socket_api.h, spelled the same in Winsock and POSIX: AF_UNIX socket files
// (Winsock's own AF_UNIX, afunix.h, Windows 10 1803 and Server 2019 on: its sun_path is a UTF-8
// file system path) and loopback TCP. What differs is behind socket_calls.h.
#include <cstring>

#include "native_net.h"  // windows/ or posix/, by CMake
#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/socket_calls.h"

namespace dxshim::socket_bridge {
namespace {

bool UnixAddress(const std::string& path, sockaddr_un& address, std::string& error) {
  address = {};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    error = "the path " + path + " does not fit an AF_UNIX address";
    return false;
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return true;
}

sockaddr_in LoopbackAddress(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

}  // namespace

Socket ListenUnix(const std::string& path, std::string& error) {
  sockaddr_un address{};
  if (!UnixAddress(path, address, error)) return {};
  Socket s(OpenSocket(AF_UNIX, SOCK_STREAM, 0));
  if (!s.valid() ||
      bind(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      listen(s.get(), SOMAXCONN) != 0) {
    error = "cannot listen on " + path + ": " + LastSocketError();
    return {};
  }
  return s;
}

Socket ConnectUnix(const std::string& path, std::string& error) {
  sockaddr_un address{};
  if (!UnixAddress(path, address, error)) return {};
  Socket s(OpenSocket(AF_UNIX, SOCK_STREAM, 0));
  if (!s.valid() ||
      connect(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = "cannot connect to " + path + ": " + LastSocketError();
    return {};
  }
  return s;
}

Socket ListenLoopback(std::uint16_t& port, std::string& error) {
  auto address = LoopbackAddress(0);
  socklen_t size = sizeof address;
  Socket s(OpenSocket(AF_INET, SOCK_STREAM, IPPROTO_TCP));
  if (!s.valid() || !KeepPortExclusive(s.get()) ||
      bind(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      listen(s.get(), SOMAXCONN) != 0 ||
      getsockname(s.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    error = "cannot listen on 127.0.0.1: " + LastSocketError();
    return {};
  }
  port = ntohs(address.sin_port);
  return s;
}

Socket ConnectLoopback(std::uint16_t port, std::string& error) {
  const auto address = LoopbackAddress(port);
  Socket s(OpenSocket(AF_INET, SOCK_STREAM, IPPROTO_TCP));
  if (!s.valid() ||
      connect(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = "cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + LastSocketError();
    return {};
  }
  return s;
}

std::uint16_t LocalPort(NativeSocket s) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (getsockname(s, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
      address.ss_family != AF_INET) {
    return 0;
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

}  // namespace dxshim::socket_bridge
