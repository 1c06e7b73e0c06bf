// POSIX half of socket_api.h.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {
namespace {

std::string ErrorText(int error) {
  return std::string(std::strerror(error)) + " (" + std::to_string(error) + ")";
}

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

// Whether process `pid`'s fds include the socket with this inode.
bool OwnsSocket(const std::string& fd_dir, const std::string& wanted) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(fd_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    char target[64];
    const auto n = ::readlink(it->path().c_str(), target, sizeof target - 1);
    if (n > 0 && std::string(target, static_cast<std::size_t>(n)) == wanted) return true;
  }
  return false;
}

// The inode of the connection whose local end is `peer` and whose remote port is `our_port`, from
// one of the kernel's TCP tables, or "". The tables print an address as the hex of its 32-bit
// words as held in memory and a port as the hex of its number ("0100007F:D431"); a dual-stack
// client (gRPC's sockets are) is in tcp6 with its IPv4-mapped address (::ffff:127.0.0.1).
std::string FindConnectionInode(const char* table_path, const sockaddr_in& peer,
                                std::uint16_t our_port) {
  constexpr std::string_view kMapped = "0000000000000000FFFF0000";
  std::ifstream table(table_path);
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    const auto colon = local.find(':');
    const auto remote_colon = remote.find(':');
    if (colon == std::string::npos || remote_colon == std::string::npos) continue;
    auto address = local.substr(0, colon);
    if (address.size() == 32) {
      if (!address.starts_with(kMapped)) continue;
      address = address.substr(kMapped.size());
    }
    try {
      if (std::stoul(address, nullptr, 16) == peer.sin_addr.s_addr &&
          std::stoul(local.substr(colon + 1), nullptr, 16) == ntohs(peer.sin_port) &&
          std::stoul(remote.substr(remote_colon + 1), nullptr, 16) == our_port) {
        return inode;
      }
    } catch (const std::exception&) {
    }
  }
  return {};
}

}  // namespace

void Socket::reset(NativeSocket s) {
  if (socket_ != kNoSocket) ::close(socket_);
  socket_ = s;
}

NetworkSession::NetworkSession() = default;
NetworkSession::~NetworkSession() = default;

std::string LastSocketError() { return ErrorText(errno); }
bool LastCallWouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }
bool LastCallOutOfDescriptors() {
  return errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM;
}

Socket ListenUnix(const std::string& path, std::string& error) {
  sockaddr_un address{};
  if (!UnixAddress(path, address, error)) return {};
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid() || ::bind(s.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(s.get(), SOMAXCONN) != 0) {
    error = "cannot listen on " + path + ": " + LastSocketError();
    return {};
  }
  return s;
}

Socket ConnectUnix(const std::string& path, std::string& error) {
  sockaddr_un address{};
  if (!UnixAddress(path, address, error)) return {};
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid() ||
      ::connect(s.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    error = "cannot connect to " + path + ": " + LastSocketError();
    return {};
  }
  return s;
}

Socket ListenLoopback(std::uint16_t& port, std::string& error) {
  auto address = LoopbackAddress(0);
  socklen_t size = sizeof address;
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid() || ::bind(s.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(s.get(), SOMAXCONN) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    error = "cannot listen on 127.0.0.1: " + LastSocketError();
    return {};
  }
  port = ntohs(address.sin_port);
  return s;
}

Socket ConnectLoopback(std::uint16_t port, std::string& error) {
  const auto address = LoopbackAddress(port);
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid() ||
      ::connect(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = "cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + LastSocketError();
    return {};
  }
  return s;
}

Socket Accept(NativeSocket listener) {
  return Socket(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
}

bool SetNonBlocking(NativeSocket s) {
  const int flags = ::fcntl(s, F_GETFL);
  return flags >= 0 && ::fcntl(s, F_SETFL, flags | O_NONBLOCK) == 0;
}

bool Poll(std::span<PollEntry> entries, std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  for (const auto& e : entries) {
    fds.push_back({e.socket,
                   static_cast<short>((e.want_read ? POLLIN : 0) | (e.want_write ? POLLOUT : 0)),
                   0});
  }
  const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  if (ready < 0) return errno == EINTR;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto r = fds[i].revents;
    const bool broken = (r & (POLLERR | POLLHUP | POLLNVAL)) != 0;
    entries[i].readable = (r & POLLIN) != 0 || (broken && entries[i].want_read);
    entries[i].writable = (r & POLLOUT) != 0 || (broken && entries[i].want_write);
  }
  return true;
}

long Receive(NativeSocket s, char* buffer, std::size_t size) { return ::recv(s, buffer, size, 0); }

long Send(NativeSocket s, const char* buffer, std::size_t size) {
  return ::send(s, buffer, size, MSG_NOSIGNAL);
}

void ShutdownWrite(NativeSocket s) { ::shutdown(s, SHUT_WR); }

std::uint16_t LocalPort(NativeSocket s) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getsockname(s, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
      address.ss_family != AF_INET) {
    return 0;
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

ProcessId ThisProcess() { return ::getpid(); }

std::optional<ProcessId> LoopbackPeerProcess(NativeSocket accepted) {
  sockaddr_in peer{};
  socklen_t size = sizeof peer;
  if (::getpeername(accepted, reinterpret_cast<sockaddr*>(&peer), &size) != 0 ||
      peer.sin_family != AF_INET) {
    return std::nullopt;
  }
  const std::uint16_t our_port = LocalPort(accepted);
  std::string inode;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    inode = FindConnectionInode(table, peer, our_port);
    if (!inode.empty()) break;
  }
  if (inode.empty() || inode == "0") return std::nullopt;
  const std::string wanted = "socket:[" + inode + "]";
  if (OwnsSocket("/proc/self/fd", wanted)) return ThisProcess();
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (OwnsSocket(it->path().string() + "/fd", wanted)) return std::stoi(name);
  }
  return std::nullopt;
}

}  // namespace dxshim::socket_bridge
