// The thin platform layer under the socket bridge: the socket calls whose names, types and error
// reporting differ between Winsock and POSIX, and nothing else: written once where the calls are
// spelled the same (socket_api_local.cpp, socket_api_tcp.cpp), the rest in socket_api_windows.cpp
// and socket_api_posix.cpp. What is built on it (socket_file, stream_bridge, socket_forwarder) is
// written once and runs on both: tested over real AF_UNIX sockets on Linux, and in dxshim.exe on
// Windows. No gRPC here.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "native_socket.h"  // NativeSocket, kNoSocket, ProcessId: windows/ or posix/, by CMake

namespace dxshim::socket_bridge {

// Owns one socket; closes it when destroyed or reset. Move-only.
class Socket {
 public:
  Socket() = default;
  explicit Socket(NativeSocket s) : socket_(s) {}
  ~Socket() { reset(); }
  Socket(Socket&& other) noexcept : socket_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  NativeSocket get() const { return socket_; }
  bool valid() const { return socket_ != kNoSocket; }
  NativeSocket release() {
    const auto s = socket_;
    socket_ = kNoSocket;
    return s;
  }
  void reset(NativeSocket s = kNoSocket);

 private:
  NativeSocket socket_ = kNoSocket;
};

// Winsock for the lifetime of this object (counted per process by Windows); nothing on POSIX.
// Throws std::runtime_error when Winsock cannot start.
class NetworkSession {
 public:
  NetworkSession();
  ~NetworkSession();  // NOLINT(performance-trivially-destructible): WSACleanup on Windows
  NetworkSession(const NetworkSession&) = delete;
  NetworkSession& operator=(const NetworkSession&) = delete;
};

// The last socket call's error, as text that names it ("connection refused (111)").
std::string LastSocketError();
// Whether the last socket call only found nothing to do yet (EAGAIN, WSAEWOULDBLOCK).
bool LastCallWouldBlock();
// Whether the last socket call failed for want of descriptors or buffers (EMFILE, ENFILE,
// ENOBUFS, ENOMEM; WSAEMFILE, WSAENOBUFS): a listener then stays readable, but accepting from it
// fails until something is closed.
bool LastCallOutOfDescriptors();

// An AF_UNIX stream socket bound to `path` and listening (the caller has removed what was
// there); invalid with `error` set otherwise.
Socket ListenUnix(const std::string& path, std::string& error);
// An AF_UNIX stream socket connected to `path`, or invalid with `error` set.
Socket ConnectUnix(const std::string& path, std::string& error);
// A TCP socket listening on 127.0.0.1 (an ephemeral port, returned in `port`).
Socket ListenLoopback(std::uint16_t& port, std::string& error);
// A TCP socket connected to 127.0.0.1:`port`.
Socket ConnectLoopback(std::uint16_t port, std::string& error);

// A TCP socket bound to `host` (a numeric IPv4 or IPv6 address, without brackets) and `port`
// (0: a free one) and listening; the port it got in `bound_port`. Invalid with `error` set
// otherwise. An IPv6 one takes IPv4 clients too (IPV6_V6ONLY off), on Linux and Windows alike.
Socket ListenTcp(const std::string& host, std::uint16_t port, std::uint16_t& bound_port,
                 std::string& error);
// A non-blocking TCP socket connected to `host` (a name or an address) and `port` within
// `timeout`, trying each address the name has. Invalid with `error` set otherwise.
Socket ConnectTcp(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout,
                  std::string& error);
// The address of the other end of a connected TCP socket ("127.0.0.1", "::1"); "" when unknown.
std::string PeerAddress(NativeSocket s);

// A connection waiting on a non-blocking listener; invalid when none is waiting.
Socket Accept(NativeSocket listener);
bool SetNonBlocking(NativeSocket s);
// What one socket waits for, and what Poll found.
struct PollEntry {
  NativeSocket socket = kNoSocket;
  bool want_read = false;
  bool want_write = false;
  bool readable = false;  // or at its end, or failed: a read says which
  bool writable = false;
};
// Waits until one of `entries` is ready or `timeout` passes; false when the wait itself failed.
bool Poll(std::span<PollEntry> entries, std::chrono::milliseconds timeout);
// > 0: bytes; 0: the other side ended its stream; < 0: an error (or LastCallWouldBlock()).
long Receive(NativeSocket s, char* buffer, std::size_t size);
// > 0: bytes taken; < 0: an error (or LastCallWouldBlock()). Never raises SIGPIPE.
long Send(NativeSocket s, const char* buffer, std::size_t size);
// No more bytes go out on `s` (its peer reads the end of the stream); reading goes on.
void ShutdownWrite(NativeSocket s);

// The local port of a TCP socket (0 when it has none, e.g. an AF_UNIX socket).
std::uint16_t LocalPort(NativeSocket s);
ProcessId ThisProcess();

struct TcpConnection;
// A row of the system's table of TCP connections: the process it names (0: none), and whether it
// is among the IPv6 connections (an IPv6 or a dual-stack socket, as gRPC makes on Windows).
struct TcpOwner {
  ProcessId process = 0;
  bool listed_as_ipv6 = false;
};
// The row of the socket whose own end is `c.local` and whose peer is `c.remote`, from the
// system's table of TCP connections (Windows: GetExtendedTcpTable with
// TCP_TABLE_OWNER_PID_CONNECTIONS; Linux: /proc/net/tcp and tcp6, and the processes' fds);
// nullopt when no such connection is listed.
std::optional<TcpOwner> ConnectionOwner(const TcpConnection& c);
// Whether this Windows program runs under wine (ntdll exports wine_get_version; Windows' does
// not). Always false on POSIX.
bool RunningUnderWine();

}  // namespace dxshim::socket_bridge
