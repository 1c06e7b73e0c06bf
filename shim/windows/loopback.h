// Windows only, no gRPC: loopback TCP helpers for the named-pipe bridges. dxshim's gRPC endpoints
// listen on 127.0.0.1, where any local process could connect; these let the bridges tell their
// own connections from anybody else's.
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <cstdint>
#include <optional>

namespace dxshim::windows {

// Winsock for the lifetime of this object: the bridges' sockets need it before gRPC, which
// starts its own, exists (WSAStartup and WSACleanup are counted per process). Throws
// std::runtime_error when Winsock cannot start.
class WinsockSession {
 public:
  WinsockSession();
  ~WinsockSession();
  WinsockSession(const WinsockSession&) = delete;
  WinsockSession& operator=(const WinsockSession&) = delete;
};

// A socket connected to 127.0.0.1:`port`, or INVALID_SOCKET.
SOCKET ConnectLoopback(int port);

// The local port of a bound or connected socket (0 when it has none).
std::uint16_t LocalPort(SOCKET socket);

// The id of the process that owns the other end of `accepted`, a connection accepted on a
// 127.0.0.1 listener, from the system's TCP table; nullopt when the table has no such row.
// (Wine names a socket's process only once that process has sent or received on it.)
std::optional<DWORD> LoopbackPeerProcess(SOCKET accepted);

}  // namespace dxshim::windows
