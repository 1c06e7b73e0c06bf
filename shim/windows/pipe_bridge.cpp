#include "shim/windows/pipe_bridge.h"

#include <vector>

namespace dxshim::windows {
namespace {

constexpr DWORD kBufferSize = 64 * 1024;

// Waits for an overlapped operation on `handle` or for `stop`. True with `bytes` set when the
// operation completed successfully; false when it failed or was cancelled because of `stop`.
bool Finish(HANDLE handle, OVERLAPPED& ov, HANDLE stop, DWORD& bytes) {
  const HANDLE events[] = {ov.hEvent, stop};
  if (WaitForMultipleObjects(2, events, FALSE, INFINITE) != WAIT_OBJECT_0) {
    CancelIoEx(handle, &ov);
  }
  // Always collect the operation (cancelled or not) before its OVERLAPPED goes away.
  return GetOverlappedResult(handle, &ov, &bytes, TRUE) != FALSE;
}

class Overlapped {
 public:
  Overlapped() { ov_.hEvent = CreateEventW(nullptr, TRUE, FALSE, nullptr); }
  ~Overlapped() { CloseHandle(ov_.hEvent); }
  Overlapped(const Overlapped&) = delete;
  Overlapped& operator=(const Overlapped&) = delete;
  OVERLAPPED& Reset() {
    const HANDLE event = ov_.hEvent;
    ov_ = OVERLAPPED{};
    ov_.hEvent = event;
    ResetEvent(event);
    return ov_;
  }

 private:
  OVERLAPPED ov_{};
};

bool ReadPipe(HANDLE pipe, Overlapped& o, HANDLE stop, char* buf, DWORD& bytes) {
  auto& ov = o.Reset();
  if (!ReadFile(pipe, buf, kBufferSize, nullptr, &ov) && GetLastError() != ERROR_IO_PENDING) {
    return false;  // the client went away (ERROR_BROKEN_PIPE) or another error
  }
  return Finish(pipe, ov, stop, bytes) && bytes > 0;
}

bool WritePipe(HANDLE pipe, Overlapped& o, HANDLE stop, const char* buf, DWORD size) {
  while (size > 0) {
    auto& ov = o.Reset();
    if (!WriteFile(pipe, buf, size, nullptr, &ov) && GetLastError() != ERROR_IO_PENDING) {
      return false;
    }
    DWORD written = 0;
    if (!Finish(pipe, ov, stop, written) || written == 0) return false;
    buf += written;
    size -= written;
  }
  return true;
}

bool ReadSocket(SOCKET s, Overlapped& o, HANDLE stop, char* buf, DWORD& bytes) {
  auto& ov = o.Reset();
  WSABUF wsabuf{kBufferSize, buf};
  DWORD flags = 0;
  if (WSARecv(s, &wsabuf, 1, nullptr, &flags, reinterpret_cast<WSAOVERLAPPED*>(&ov), nullptr) ==
          SOCKET_ERROR &&
      WSAGetLastError() != WSA_IO_PENDING) {
    return false;
  }
  return Finish(reinterpret_cast<HANDLE>(s), ov, stop, bytes) && bytes > 0;  // 0: peer closed
}

bool WriteSocket(SOCKET s, Overlapped& o, HANDLE stop, const char* buf, DWORD size) {
  while (size > 0) {
    auto& ov = o.Reset();
    WSABUF wsabuf{size, const_cast<char*>(buf)};
    if (WSASend(s, &wsabuf, 1, nullptr, 0, reinterpret_cast<WSAOVERLAPPED*>(&ov), nullptr) ==
            SOCKET_ERROR &&
        WSAGetLastError() != WSA_IO_PENDING) {
      return false;
    }
    DWORD sent = 0;
    if (!Finish(reinterpret_cast<HANDLE>(s), ov, stop, sent) || sent == 0) return false;
    buf += sent;
    size -= sent;
  }
  return true;
}

}  // namespace

PipeBridge::PipeBridge(HANDLE pipe, SOCKET socket, SocketAdmission admit,
                       OwnConnections::Registration listed)
    : pipe_(pipe),
      socket_(socket),
      admit_(std::move(admit)),
      listed_(std::move(listed)),
      stop_(CreateEventW(nullptr, TRUE, FALSE, nullptr)) {
  pipe_to_socket_ = std::thread([this] { PipeToSocket(); });
  socket_to_pipe_ = std::thread([this] { SocketToPipe(); });
}

PipeBridge::~PipeBridge() {
  Stop();
  pipe_to_socket_.join();
  socket_to_pipe_.join();
  CloseHandle(stop_);
}

void PipeBridge::DirectionDone() {
  SetEvent(stop_);  // a side closed or failed: the other direction ends too
  if (++finished_ == 2) {
    // Both directions are out of their I/O: close both ends now, so that the peers see the
    // connection end at once rather than when the bridge is reaped.
    FlushFileBuffers(pipe_);
    CloseHandle(pipe_);
    // Unlisted first: once the socket closes, its address and port are anybody's to take.
    listed_.reset();
    shutdown(socket_, SD_BOTH);
    closesocket(socket_);
  }
}

void PipeBridge::Stop() { SetEvent(stop_); }

void PipeBridge::PipeToSocket() {
  std::vector<char> buf(kBufferSize);
  Overlapped in;
  Overlapped out;
  DWORD n = 0;
  while (ReadPipe(pipe_, in, stop_, buf.data(), n) &&
         WriteSocket(socket_, out, stop_, buf.data(), n)) {
  }
  DirectionDone();
}

void PipeBridge::SocketToPipe() {
  std::vector<char> buf(kBufferSize);
  Overlapped in;
  Overlapped out;
  DWORD n = 0;
  bool first = true;
  while (ReadSocket(socket_, in, stop_, buf.data(), n)) {
    if (first && admit_ && !admit_(socket_)) break;
    first = false;
    if (!WritePipe(pipe_, out, stop_, buf.data(), n)) break;
  }
  DirectionDone();
}

void BridgeSet::ReapLocked() {
  bridges_.remove_if([](const std::unique_ptr<PipeBridge>& b) { return b->finished(); });
}

void BridgeSet::Add(HANDLE pipe, SOCKET socket, SocketAdmission admit,
                    OwnConnections::Registration listed) {
  std::lock_guard lock(mutex_);
  ReapLocked();
  bridges_.push_back(
      std::make_unique<PipeBridge>(pipe, socket, std::move(admit), std::move(listed)));
}

void BridgeSet::StopAll() {
  std::list<std::unique_ptr<PipeBridge>> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(bridges_);
  }
  for (auto& b : all) b->Stop();
  all.clear();  // joins
}

std::size_t BridgeSet::active() {
  std::lock_guard lock(mutex_);
  ReapLocked();
  return bridges_.size();
}

}  // namespace dxshim::windows
