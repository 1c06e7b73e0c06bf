#include "shim/windows/loopback.h"

// clang-format off
#include <ws2tcpip.h>
#include <iphlpapi.h>
// clang-format on

#include <stdexcept>
#include <string>
#include <vector>

namespace dxshim::windows {

WinsockSession::WinsockSession() {
  WSADATA data;
  if (const int error = WSAStartup(MAKEWORD(2, 2), &data); error != 0) {
    throw std::runtime_error("Winsock did not start (WSAStartup error " + std::to_string(error) +
                             ")");
  }
}

WinsockSession::~WinsockSession() { WSACleanup(); }

SOCKET ConnectLoopback(int port) {
  const SOCKET s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_OVERLAPPED);
  if (s == INVALID_SOCKET) return INVALID_SOCKET;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<u_short>(port));
  if (connect(s, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    closesocket(s);
    return INVALID_SOCKET;
  }
  return s;
}

std::uint16_t LocalPort(SOCKET socket) {
  sockaddr_in address{};
  int size = sizeof(address);
  if (getsockname(socket, reinterpret_cast<sockaddr*>(&address), &size) != 0) return 0;
  return ntohs(address.sin_port);
}

std::optional<DWORD> LoopbackPeerProcess(SOCKET accepted) {
  sockaddr_in peer{};
  int size = sizeof(peer);
  if (getpeername(accepted, reinterpret_cast<sockaddr*>(&peer), &size) != 0) return std::nullopt;
  const std::uint16_t our_port = LocalPort(accepted);
  // The peer's row: its local end is the peer address, its remote end our listener's port.
  std::vector<char> table;
  DWORD bytes = 0;
  DWORD result = ERROR_INSUFFICIENT_BUFFER;
  for (int attempt = 0; attempt < 4 && result == ERROR_INSUFFICIENT_BUFFER; ++attempt) {
    table.resize(bytes);
    result = GetExtendedTcpTable(table.empty() ? nullptr : table.data(), &bytes, FALSE, AF_INET,
                                 TCP_TABLE_OWNER_PID_CONNECTIONS, 0);
  }
  if (result != NO_ERROR || table.size() < sizeof(MIB_TCPTABLE_OWNER_PID)) return std::nullopt;
  const auto* rows = reinterpret_cast<const MIB_TCPTABLE_OWNER_PID*>(table.data());
  for (DWORD i = 0; i < rows->dwNumEntries; ++i) {
    const auto& row = rows->table[i];
    if (row.dwLocalAddr == peer.sin_addr.s_addr &&
        ntohs(static_cast<u_short>(row.dwLocalPort)) == ntohs(peer.sin_port) &&
        ntohs(static_cast<u_short>(row.dwRemotePort)) == our_port) {
      return row.dwOwningPid;
    }
  }
  return std::nullopt;
}

}  // namespace dxshim::windows
