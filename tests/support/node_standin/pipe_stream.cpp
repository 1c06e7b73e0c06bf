// A named pipe as a ByteStream with overlapped I/O, and dialing a pipe as containerd's and
// kubelet's clients do.
#include "tests/support/node_standin/pipe_stream.h"

#include <algorithm>

#include "tests/support/node_standin/service_runner.h"

namespace dxshim::test::node_standin {

PipeStream::PipeStream(HANDLE pipe, DWORD timeout_ms)
    : pipe_(pipe), event_(CreateEventW(nullptr, TRUE, FALSE, nullptr)), timeout_ms_(timeout_ms) {}

PipeStream::~PipeStream() {
  CloseHandle(pipe_);
  CloseHandle(event_);
}

bool PipeStream::Finish(OVERLAPPED& overlapped, BOOL started, DWORD& transferred) {
  if (!started && GetLastError() != ERROR_IO_PENDING) return false;
  if (started) return GetOverlappedResult(pipe_, &overlapped, &transferred, FALSE) != FALSE;
  const HANDLE waits[] = {event_, g_stop};
  const DWORD count = g_stop ? 2 : 1;
  if (WaitForMultipleObjects(count, waits, FALSE, timeout_ms_) != WAIT_OBJECT_0) {
    CancelIoEx(pipe_, &overlapped);
    GetOverlappedResult(pipe_, &overlapped, &transferred, TRUE);  // the buffer is free again
    return false;
  }
  return GetOverlappedResult(pipe_, &overlapped, &transferred, FALSE) != FALSE;
}

bool PipeStream::ReadExact(char* data, std::size_t size) {
  while (size > 0) {
    if (buffer_at_ < buffer_.size()) {
      const std::size_t n = std::min(size, buffer_.size() - buffer_at_);
      std::copy_n(buffer_.data() + buffer_at_, n, data);
      buffer_at_ += n;
      data += n;
      size -= n;
      continue;
    }
    buffer_.resize(65536);
    buffer_at_ = 0;
    OVERLAPPED overlapped{};
    overlapped.hEvent = event_;
    ResetEvent(event_);
    DWORD got = 0;
    const BOOL started =
        ReadFile(pipe_, buffer_.data(), static_cast<DWORD>(buffer_.size()), nullptr, &overlapped);
    const bool ok = Finish(overlapped, started, got);
    buffer_.resize(ok ? got : 0);
    if (!ok || got == 0) return false;  // the other end closed, an error, a timeout or g_stop
  }
  return true;
}

bool PipeStream::Write(const char* data, std::size_t size) {
  while (size > 0) {
    OVERLAPPED overlapped{};
    overlapped.hEvent = event_;
    ResetEvent(event_);
    DWORD written = 0;
    const auto chunk = static_cast<DWORD>(std::min<std::size_t>(size, 1 << 20));
    const BOOL started = WriteFile(pipe_, data, chunk, nullptr, &overlapped);
    if (!Finish(overlapped, started, written) || written == 0) return false;
    data += written;
    size -= written;
  }
  return true;
}

HANDLE DialPipe(std::wstring pipe, DWORD timeout_ms, bool retry_missing, DWORD& error) {
  for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  const ULONGLONG deadline = GetTickCount64() + timeout_ms;
  for (;;) {
    const HANDLE handle = CreateFileW(pipe.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr,
                                      OPEN_EXISTING, FILE_FLAG_OVERLAPPED, nullptr);
    if (handle != INVALID_HANDLE_VALUE) return handle;
    error = GetLastError();
    const ULONGLONG now = GetTickCount64();
    if (now >= deadline) return INVALID_HANDLE_VALUE;
    const auto left = static_cast<DWORD>(deadline - now);
    if (error == ERROR_PIPE_BUSY) {
      WaitNamedPipeW(pipe.c_str(), left);
    } else if (retry_missing && error == ERROR_FILE_NOT_FOUND) {
      const DWORD pause = std::min<DWORD>(left, 10);
      if (!g_stop)
        Sleep(pause);  // a command line tool (ctr.exe): no stop event
      else if (WaitForSingleObject(g_stop, pause) == WAIT_OBJECT_0)
        return INVALID_HANDLE_VALUE;
    } else {
      return INVALID_HANDLE_VALUE;
    }
  }
}

}  // namespace dxshim::test::node_standin
