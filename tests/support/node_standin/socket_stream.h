// A TCP connection as a ByteStream (kubelet's tcp:// runtime endpoints).
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on

#include <string>

#include "tests/support/node_standin/byte_stream.h"

namespace dxshim::test::node_standin {

class SocketStream : public ByteStream {
 public:
  // Takes SOCKET, connected; TIMEOUT_MS bounds each receive and send.
  SocketStream(SOCKET socket, DWORD timeout_ms);
  ~SocketStream() override;
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;
  bool ReadExact(char* data, std::size_t size) override;
  bool Write(const char* data, std::size_t size) override;

 private:
  SOCKET socket_;
};

// HOST:PORT connected over TCP, or INVALID_SOCKET.
SOCKET ConnectTcp(const std::wstring& host_port);

}  // namespace dxshim::test::node_standin
