// A named pipe connection as a ByteStream, for the gRPC and TTRPC codecs: overlapped I/O, so that
// a read or write gives up at g_stop or after the stream's timeout instead of blocking forever.
#pragma once

#include <windows.h>

#include <cstddef>
#include <string>

#include "tests/support/node_standin/byte_stream.h"

namespace dxshim::test::node_standin {

class PipeStream : public ByteStream {
 public:
  // Takes PIPE, an overlapped handle (a connected server instance, or DialPipe's). TIMEOUT_MS
  // bounds each wait for the peer (INFINITE: only g_stop ends it).
  explicit PipeStream(HANDLE pipe, DWORD timeout_ms = INFINITE);
  ~PipeStream() override;
  PipeStream(const PipeStream&) = delete;
  PipeStream& operator=(const PipeStream&) = delete;

  bool ReadExact(char* data, std::size_t size) override;
  bool Write(const char* data, std::size_t size) override;
  HANDLE handle() const { return pipe_; }

 private:
  // Waits for OVERLAPPED's operation; false (the operation cancelled) on g_stop or the timeout.
  bool Finish(OVERLAPPED& overlapped, BOOL started, DWORD& transferred);

  HANDLE pipe_;
  HANDLE event_;
  DWORD timeout_ms_;
  std::string buffer_;  // read ahead, from buffer_at_
  std::size_t buffer_at_ = 0;
};

// Opens \\.\pipe\NAME (slashes allowed) as a client for overlapped I/O: INVALID_HANDLE_VALUE with
// ERROR set when it cannot. A busy pipe is waited for (WaitNamedPipe) within TIMEOUT_MS; a pipe
// that does not exist fails at once (go-winio's DialPipe, kubelet's dialer) unless RETRY_MISSING,
// which retries it every 10 ms within TIMEOUT_MS (containerd's pkg/dialer timeoutDialer, which
// loops while the error is "not exist").
HANDLE DialPipe(std::wstring pipe, DWORD timeout_ms, bool retry_missing, DWORD& error);

}  // namespace dxshim::test::node_standin
