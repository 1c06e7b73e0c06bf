// A TCP connection as a ByteStream, with winsock.
#include "tests/support/node_standin/socket_stream.h"

#include <ws2tcpip.h>

#include <algorithm>

namespace dxshim::test::node_standin {

SocketStream::SocketStream(SOCKET socket, DWORD timeout_ms) : socket_(socket) {
  setsockopt(socket_, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&timeout_ms),
             sizeof(timeout_ms));
  setsockopt(socket_, SOL_SOCKET, SO_SNDTIMEO, reinterpret_cast<const char*>(&timeout_ms),
             sizeof(timeout_ms));
}

SocketStream::~SocketStream() { closesocket(socket_); }

bool SocketStream::ReadExact(char* data, std::size_t size) {
  while (size > 0) {
    const int n = recv(socket_, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)), 0);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool SocketStream::Write(const char* data, std::size_t size) {
  while (size > 0) {
    const int n = send(socket_, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)), 0);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

SOCKET ConnectTcp(const std::wstring& host_port) {
  const auto colon = host_port.rfind(L':');
  if (colon == std::wstring::npos) return INVALID_SOCKET;
  std::wstring host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == L'[') host = host.substr(1, host.size() - 2);
  ADDRINFOW hints{};
  hints.ai_socktype = SOCK_STREAM;
  ADDRINFOW* found = nullptr;
  if (GetAddrInfoW(host.c_str(), host_port.substr(colon + 1).c_str(), &hints, &found) != 0)
    return INVALID_SOCKET;
  SOCKET s = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (s != INVALID_SOCKET && connect(s, found->ai_addr, static_cast<int>(found->ai_addrlen)) != 0) {
    closesocket(s);
    s = INVALID_SOCKET;
  }
  FreeAddrInfoW(found);
  return s;
}

}  // namespace dxshim::test::node_standin
