// Windows only, no gRPC: the upstream leg to a runtime that listens on a named pipe
// (npipe://./pipe/containerd-containerd). dxshim's gRPC channel dials a loopback TCP port; each
// connection there is bridged to a new connection to the pipe.
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "shim/windows/pipe_bridge.h"

namespace dxshim::windows {

// Connects to the pipe server at `path` (\\.\pipe\name) with an overlapped handle, waiting up to
// `timeout` while every instance is busy. Throws std::runtime_error naming the pipe and the
// error (no such pipe, access denied, timeout).
HANDLE DialPipe(const std::string& path, std::chrono::milliseconds timeout);

// Who may use the forwarder's loopback port. The runtime's pipe admits only SYSTEM and
// Administrators; dxshim runs as SYSTEM, so a forwarder open to any local process would hand
// the runtime to any local user. dxshim serve uses kThisProcess: a connection's first bytes go
// on only when the system's TCP table says its other end belongs to this process (asked once
// the client has sent them: wine attributes a socket to its process only after it is used).
enum class ForwarderPeers { kAnyLocal, kThisProcess };

class PipeForwarder {
 public:
  using Warn = std::function<void(const std::string&)>;
  explicit PipeForwarder(std::string pipe_path, ForwarderPeers peers = ForwarderPeers::kAnyLocal,
                         Warn warn = {})
      : pipe_path_(std::move(pipe_path)), peers_(peers), warn_(std::move(warn)) {}
  ~PipeForwarder();
  PipeForwarder(const PipeForwarder&) = delete;
  PipeForwarder& operator=(const PipeForwarder&) = delete;

  // Listens on 127.0.0.1 (an ephemeral port) and returns the port. Throws std::runtime_error.
  int Start();
  void Stop();  // closes the listener and every bridged connection, joins; idempotent
  std::size_t active_connections() { return bridges_.active(); }
  std::size_t refused_connections() const { return refused_; }

 private:
  void AcceptLoop();
  bool Admit(SOCKET client);

  std::string pipe_path_;
  ForwarderPeers peers_;
  Warn warn_;
  std::atomic<std::size_t> refused_{0};
  SOCKET listener_ = INVALID_SOCKET;
  HANDLE accept_event_ = nullptr;
  HANDLE stop_ = nullptr;
  std::thread thread_;
  BridgeSet bridges_;
};

}  // namespace dxshim::windows
