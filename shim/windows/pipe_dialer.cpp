#include "shim/windows/pipe_dialer.h"

#include <ws2tcpip.h>

#include <stdexcept>

#include "devices/windows/wide_text.h"
#include "shim/windows/loopback.h"

namespace dxshim::windows {

HANDLE DialPipe(const std::string& path, std::chrono::milliseconds timeout) {
  const auto wide = devices::windows::Widen(path);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // SECURITY_IDENTIFICATION: whoever serves the pipe (an impostor that took the name while
    // containerd or dxshim was down) may learn who dials, never act as this process.
    const HANDLE pipe = CreateFileW(
        wide.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
        FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
    if (pipe != INVALID_HANDLE_VALUE) return pipe;
    const DWORD error = GetLastError();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (error != ERROR_PIPE_BUSY || left.count() <= 0) {
      throw std::runtime_error("cannot connect to pipe " + path + ": " +
                               (error == ERROR_FILE_NOT_FOUND  ? "no such pipe"
                                : error == ERROR_ACCESS_DENIED ? "access denied"
                                : error == ERROR_PIPE_BUSY     ? "every instance stayed busy"
                                                               : "error " + std::to_string(error)));
    }
    WaitNamedPipeW(wide.c_str(), static_cast<DWORD>(std::min<long long>(left.count(), 1000)));
  }
}

PipeForwarder::~PipeForwarder() { Stop(); }

int PipeForwarder::Start() {
  listener_ = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_OVERLAPPED);
  if (listener_ == INVALID_SOCKET) {
    throw std::runtime_error("socket failed: " + std::to_string(WSAGetLastError()));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  int size = sizeof(address);
  if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener_, SOMAXCONN) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    const int error = WSAGetLastError();
    closesocket(listener_);
    listener_ = INVALID_SOCKET;
    throw std::runtime_error("cannot listen on 127.0.0.1: " + std::to_string(error));
  }
  accept_event_ = WSACreateEvent();
  WSAEventSelect(listener_, accept_event_, FD_ACCEPT);
  stop_ = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  thread_ = std::thread([this] { AcceptLoop(); });
  return ntohs(address.sin_port);
}

void PipeForwarder::AcceptLoop() {
  const HANDLE events[] = {accept_event_, stop_};
  while (WaitForMultipleObjects(2, events, FALSE, INFINITE) == WAIT_OBJECT_0) {
    WSANETWORKEVENTS happened{};
    WSAEnumNetworkEvents(listener_, accept_event_, &happened);
    for (;;) {
      const SOCKET client = accept(listener_, nullptr, nullptr);
      if (client == INVALID_SOCKET) break;  // WSAEWOULDBLOCK: none left
      // Accepted sockets inherit the listener's event selection (and non-blocking mode, which
      // overlapped I/O does not mind).
      WSAEventSelect(client, nullptr, 0);
      HANDLE pipe = INVALID_HANDLE_VALUE;
      try {
        pipe = DialPipe(pipe_path_, std::chrono::seconds(5));
      } catch (const std::exception& e) {
        if (warn_) warn_(e.what());
        closesocket(client);  // the gRPC channel sees the connection fail and retries
        continue;
      }
      // The owner is checked once the client has spoken (a gRPC channel always does first), on
      // the bridge's thread: a silent connection cannot stall this loop, and no byte reaches
      // the runtime before the check.
      if (peers_ == ForwarderPeers::kThisProcess) {
        bridges_.Add(pipe, client, [this](SOCKET s) { return Admit(s); });
      } else {
        bridges_.Add(pipe, client);
      }
    }
  }
}

bool PipeForwarder::Admit(SOCKET client) {
  std::string refusal;
  if (PeerIsThisProcess(client, refusal)) return true;
  ++refused_;
  if (warn_)
    warn_("refused a connection to the runtime forwarder for " + pipe_path_ + ": " + refusal);
  return false;
}

void PipeForwarder::Stop() {
  if (!stop_) return;
  SetEvent(stop_);
  if (thread_.joinable()) thread_.join();
  bridges_.StopAll();
  closesocket(listener_);
  listener_ = INVALID_SOCKET;
  WSACloseEvent(accept_event_);
  CloseHandle(stop_);
  stop_ = nullptr;
}

}  // namespace dxshim::windows
