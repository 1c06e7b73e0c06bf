// Windows only, no gRPC: dxshim's named-pipe listener (npipe://./pipe/dxshim for kubelet). gRPC
// C++ has no named-pipe transport, so each pipe connection is bridged to a connection handed to
// dxshim's gRPC server (socket_pair.h; the server listens on no port). Overlapped I/O; one
// listening instance is always waiting; the pipe's security descriptor admits only SYSTEM and
// Administrators unless configured.
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "shim/windows/pipe_bridge.h"

namespace dxshim::windows {

class PipeAcceptor {
 public:
  // `dial_backend` returns the bridge's end of a connection whose other end it handed to the
  // gRPC server, setting `served_as` to the peer name gRPC gave it; or INVALID_SOCKET (the pipe
  // client is then disconnected).
  using DialBackend = std::function<SOCKET(std::string& served_as)>;
  PipeAcceptor(std::string pipe_path, std::string sddl, DialBackend dial_backend);
  ~PipeAcceptor();
  PipeAcceptor(const PipeAcceptor&) = delete;
  PipeAcceptor& operator=(const PipeAcceptor&) = delete;

  // Creates the first pipe instance and starts accepting. While another process serves the pipe
  // name, waits for it to be free (up to set_wait_for_pipe's time, calling its `on_wait` once).
  // Throws std::runtime_error naming the problem: an invalid SDDL, or the pipe name still served
  // by another process.
  void Start();
  // How long Start waits for the pipe to be free (none by default). Set before Start.
  void set_wait_for_pipe(std::chrono::milliseconds wait, std::function<void()> on_wait) {
    wait_for_pipe_ = wait;
    on_wait_ = std::move(on_wait);
  }
  // Stops accepting, closes every bridged connection, joins every thread. Idempotent.
  void Stop();
  std::size_t active_connections() { return bridges_.active(); }
  // Called with the client's program file name (kubelet.exe, ctr.exe; "" when it cannot be
  // read) for each connection, on the accepting thread. Set before Start.
  void set_on_client(std::function<void(const std::string&)> on_client) {
    on_client_ = std::move(on_client);
  }
  // The live bridges' connections handed to the gRPC server: it admits a call only over one of
  // them (own_connections.h), and learns from it which pipe client made the call.
  OwnConnections& backend_connections() { return backend_connections_; }

 private:
  HANDLE CreateInstance(bool first, DWORD& error);
  HANDLE FirstInstance(DWORD& error);
  void AcceptLoop(HANDLE listening);

  std::wstring path_;
  std::string sddl_;
  DialBackend dial_backend_;
  std::function<void(const std::string&)> on_client_;
  std::chrono::milliseconds wait_for_pipe_{0};
  std::function<void()> on_wait_;
  SECURITY_ATTRIBUTES security_{};
  HANDLE stop_ = nullptr;
  std::thread thread_;
  OwnConnections backend_connections_;  // before bridges_: they unlist themselves from it
  BridgeSet bridges_;
};

}  // namespace dxshim::windows
