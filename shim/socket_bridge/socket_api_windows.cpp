// Winsock half of socket_api.h and socket_calls.h: the calls spelled differently from POSIX's
// (closesocket, ioctlsocket, WSAPoll, WSAGetLastError and its messages, SO_EXCLUSIVEADDRUSE),
// Winsock's start, and the owner of a TCP connection from GetExtendedTcpTable.
// clang-format off
#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/socket_calls.h"
#include "shim/socket_bridge/tcp_endpoint.h"
#include <ws2tcpip.h>
#include <iphlpapi.h>
// clang-format on

#include <stdexcept>
#include <vector>

namespace dxshim::socket_bridge {
namespace {

// The system's message as UTF-8 (FormatMessageW: FormatMessageA would give the ANSI code page,
// which is not UTF-8 on a localized Windows); "" when there is none.
std::string SystemMessage(int error) {
  wchar_t* wide = nullptr;
  FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, static_cast<DWORD>(error), 0, reinterpret_cast<wchar_t*>(&wide), 0, nullptr);
  if (!wide) return "";
  std::string out;
  const int n = WideCharToMultiByte(CP_UTF8, 0, wide, -1, nullptr, 0, nullptr, nullptr);
  if (n > 1) {
    out.resize(static_cast<std::size_t>(n));
    WideCharToMultiByte(CP_UTF8, 0, wide, -1, out.data(), n, nullptr, nullptr);
    out.resize(static_cast<std::size_t>(n - 1));  // the NUL
  }
  LocalFree(wide);
  return out;
}

std::string ErrorText(int error) {
  const std::string text = SystemMessage(error);
  // Wine has no message texts for Winsock's codes: the common ones are named here.
  const char* fallback = error == WSAEAFNOSUPPORT   ? "address family not supported"
                         : error == WSAECONNREFUSED ? "connection refused"
                         : error == WSAEADDRINUSE   ? "address in use"
                         : error == WSAECONNRESET   ? "connection reset"
                         : error == WSAEACCES       ? "access denied"
                                                    : "error";
  std::string message = text.empty() ? fallback : text;
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == '.' || message.back() == ' ')) {
    message.pop_back();
  }
  return message + " (" + std::to_string(error) + ")";
}

}  // namespace

void Socket::reset(NativeSocket s) {
  if (socket_ != kNoSocket) closesocket(socket_);
  socket_ = s;
}

NetworkSession::NetworkSession() {
  WSADATA data;
  if (const int error = WSAStartup(MAKEWORD(2, 2), &data); error != 0) {
    throw std::runtime_error("Winsock did not start (WSAStartup error " + std::to_string(error) +
                             ")");
  }
}

NetworkSession::~NetworkSession() { WSACleanup(); }

std::string LastSocketError() { return ErrorText(WSAGetLastError()); }
bool LastCallWouldBlock() { return WSAGetLastError() == WSAEWOULDBLOCK; }
bool LastCallOutOfDescriptors() {
  const int error = WSAGetLastError();
  return error == WSAEMFILE || error == WSAENOBUFS;
}

NativeSocket OpenSocket(int family, int type, int protocol) {
  return socket(family, type, protocol);
}

bool KeepPortExclusive(NativeSocket s) {
  const BOOL exclusive = TRUE;
  return setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, reinterpret_cast<const char*>(&exclusive),
                    sizeof exclusive) == 0;
}

bool ReuseTimeWaitPort(NativeSocket /*s*/) { return true; }

bool LastConnectPending() { return WSAGetLastError() == WSAEWOULDBLOCK; }

std::optional<int> SelectWidth(NativeSocket /*s*/) { return 0; }

Socket Accept(NativeSocket listener) { return Socket(accept(listener, nullptr, nullptr)); }

bool SetNonBlocking(NativeSocket s) {
  u_long on = 1;
  return ioctlsocket(s, static_cast<long>(FIONBIO), &on) == 0;
}

bool Poll(std::span<PollEntry> entries, std::chrono::milliseconds timeout) {
  std::vector<WSAPOLLFD> fds;
  for (const auto& e : entries) {
    fds.push_back(
        {e.socket,
         static_cast<SHORT>((e.want_read ? POLLRDNORM : 0) | (e.want_write ? POLLWRNORM : 0)), 0});
  }
  if (WSAPoll(fds.data(), static_cast<ULONG>(fds.size()), static_cast<INT>(timeout.count())) ==
      SOCKET_ERROR) {
    return false;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto r = fds[i].revents;
    SetReadiness(entries[i], (r & POLLRDNORM) != 0, (r & POLLWRNORM) != 0,
                 (r & (POLLERR | POLLHUP | POLLNVAL)) != 0);
  }
  return true;
}

long Receive(NativeSocket s, char* buffer, std::size_t size) {
  return recv(s, buffer, static_cast<int>(size), 0);
}

long Send(NativeSocket s, const char* buffer, std::size_t size) {
  return send(s, buffer, static_cast<int>(size), 0);
}

void ShutdownWrite(NativeSocket s) { shutdown(s, SD_SEND); }

ProcessId ThisProcess() { return GetCurrentProcessId(); }

namespace {

// The system's table of TCP connections with their owners, for one address family. On a busy
// node it grows between asking its size and reading it (closed connections linger in TIME_WAIT),
// so each attempt asks for a quarter more than the size last reported.
template <typename Table>
std::vector<char> TcpTable(ULONG family) {
  std::vector<char> table;
  DWORD bytes = 0;
  DWORD result =
      GetExtendedTcpTable(nullptr, &bytes, FALSE, family, TCP_TABLE_OWNER_PID_CONNECTIONS, 0);
  for (int attempt = 0; attempt < 8 && result == ERROR_INSUFFICIENT_BUFFER; ++attempt) {
    bytes += bytes / 4 + 4096;
    table.resize(bytes);
    result = GetExtendedTcpTable(table.data(), &bytes, FALSE, family,
                                 TCP_TABLE_OWNER_PID_CONNECTIONS, 0);
  }
  if (result != NO_ERROR || table.size() < sizeof(Table)) table.clear();
  return table;
}

}  // namespace

std::optional<TcpOwner> ConnectionOwner(const TcpConnection& c) {
  const auto port_of = [](DWORD port) { return ntohs(static_cast<u_short>(port)); };
  // A dual-stack socket (gRPC makes them) may be listed among the IPv6 connections with
  // IPv4-mapped addresses (wine does so): EndpointFromBytes reads those as the IPv4 ones, so
  // both tables are searched for every connection.
  const auto v4 = TcpTable<MIB_TCPTABLE_OWNER_PID>(AF_INET);
  if (!v4.empty()) {
    const auto* rows = reinterpret_cast<const MIB_TCPTABLE_OWNER_PID*>(v4.data());
    for (DWORD i = 0; i < rows->dwNumEntries; ++i) {
      const auto& row = rows->table[i];
      const auto local = EndpointFromBytes(reinterpret_cast<const std::uint8_t*>(&row.dwLocalAddr),
                                           4, port_of(row.dwLocalPort));
      const auto remote = EndpointFromBytes(
          reinterpret_cast<const std::uint8_t*>(&row.dwRemoteAddr), 4, port_of(row.dwRemotePort));
      if (local == c.local && remote == c.remote) return TcpOwner{row.dwOwningPid, false};
    }
  }
  const auto v6 = TcpTable<MIB_TCP6TABLE_OWNER_PID>(AF_INET6);
  if (v6.empty()) return std::nullopt;
  const auto* rows = reinterpret_cast<const MIB_TCP6TABLE_OWNER_PID*>(v6.data());
  for (DWORD i = 0; i < rows->dwNumEntries; ++i) {
    const auto& row = rows->table[i];
    const auto local = EndpointFromBytes(row.ucLocalAddr, 16, port_of(row.dwLocalPort));
    const auto remote = EndpointFromBytes(row.ucRemoteAddr, 16, port_of(row.dwRemotePort));
    if (local == c.local && remote == c.remote) return TcpOwner{row.dwOwningPid, true};
  }
  return std::nullopt;
}

bool RunningUnderWine() {
  static const bool wine = [] {
    const HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    return ntdll != nullptr && GetProcAddress(ntdll, "wine_get_version") != nullptr;
  }();
  return wine;
}

}  // namespace dxshim::socket_bridge
