// POSIX half of socket_api.h and socket_calls.h: the calls spelled differently from Winsock's
// (close, fcntl, poll, accept4, MSG_NOSIGNAL, errno) and the owner of a TCP connection from /proc.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/socket_calls.h"
#include "shim/socket_bridge/tcp_endpoint.h"

namespace dxshim::socket_bridge {
namespace {

std::string ErrorText(int error) {
  return std::string(std::strerror(error)) + " (" + std::to_string(error) + ")";
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

// An address and port as the kernel's TCP tables print them: the hex of each 32-bit word of the
// address as held in memory ("0100007F" is 127.0.0.1, 32 digits for IPv6), a colon, the hex of
// the port ("D431").
std::optional<TcpEndpoint> TableEndpoint(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || (colon != 8 && colon != 32)) return std::nullopt;
  std::uint8_t bytes[16] = {};
  try {
    for (std::size_t word = 0; word * 8 < colon; ++word) {
      const auto value =
          static_cast<std::uint32_t>(std::stoul(text.substr(word * 8, 8), nullptr, 16));
      std::memcpy(bytes + word * 4, &value, 4);
    }
    const auto port = std::stoul(text.substr(colon + 1), nullptr, 16);
    if (port > 65535) return std::nullopt;
    return EndpointFromBytes(bytes, colon / 2, static_cast<std::uint16_t>(port));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The inode of the socket whose own end is `c.local` and whose peer is `c.remote`, from one of
// the kernel's TCP tables, or "". A dual-stack socket is in tcp6 with IPv4-mapped addresses,
// which TableEndpoint reads as the IPv4 ones.
std::string FindConnectionInode(const char* table_path, const TcpConnection& c) {
  std::ifstream table(table_path);
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (TableEndpoint(local) == c.local && TableEndpoint(remote) == c.remote) return inode;
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

NativeSocket OpenSocket(int family, int type, int protocol) {
  return ::socket(family, type | SOCK_CLOEXEC, protocol);
}

bool KeepPortExclusive(NativeSocket /*s*/) { return true; }

bool ReuseTimeWaitPort(NativeSocket s) {
  const int on = 1;
  return ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0;
}

bool LastConnectPending() { return errno == EINPROGRESS; }

std::optional<int> SelectWidth(NativeSocket s) {
  if (s >= FD_SETSIZE) return std::nullopt;
  return s + 1;
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
    SetReadiness(entries[i], (r & POLLIN) != 0, (r & POLLOUT) != 0,
                 (r & (POLLERR | POLLHUP | POLLNVAL)) != 0);
  }
  return true;
}

long Receive(NativeSocket s, char* buffer, std::size_t size) { return ::recv(s, buffer, size, 0); }

long Send(NativeSocket s, const char* buffer, std::size_t size) {
  return ::send(s, buffer, size, MSG_NOSIGNAL);
}

void ShutdownWrite(NativeSocket s) { ::shutdown(s, SHUT_WR); }

ProcessId ThisProcess() { return ::getpid(); }

std::optional<TcpOwner> ConnectionOwner(const TcpConnection& c) {
  std::string inode;
  TcpOwner owner;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    inode = FindConnectionInode(table, c);
    if (!inode.empty()) break;
    owner.listed_as_ipv6 = true;
  }
  if (inode.empty()) return std::nullopt;
  if (inode == "0") return owner;  // no socket holds it any more (TIME_WAIT)
  const std::string wanted = "socket:[" + inode + "]";
  if (OwnsSocket("/proc/self/fd", wanted)) {
    owner.process = ThisProcess();
    return owner;
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (OwnsSocket(it->path().string() + "/fd", wanted)) {
      owner.process = std::stoi(name);
      break;
    }
  }
  return owner;  // process 0: listed, and no process this one may look into holds it
}

bool RunningUnderWine() { return false; }

}  // namespace dxshim::socket_bridge
