// Windows only, no gRPC: the named-pipe side of `dxshim serve`. Kubelet and containerd speak
// over named pipes on Windows, which gRPC C++ cannot, so each pipe endpoint is bridged:
//   kubelet -> \\.\pipe\dxshim (pipe-sddl) -> PipeAcceptor -> a connection to itself whose
//              other end is handed to the gRPC server (socket_pair.h), which listens on no port
//   gRPC channel -> 127.0.0.1:<forwarder port> -> PipeForwarder -> \\.\pipe\containerd-containerd
// So gRPC's parser reads only what came through the pipe's security descriptor; each call is
// still checked against the acceptor's bridges (Admits), which also names its pipe client. The
// forwarder bridges only this process's connections, or any local user could reach containerd
// through it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shim/proxy/cri_callers.h"
#include "shim/proxy/endpoint.h"
#include "shim/socket_bridge/socket_pair.h"
#include "shim/windows/loopback.h"
#include "shim/windows/pipe_acceptor.h"
#include "shim/windows/pipe_dialer.h"

namespace dxshim::windows {

class PipeTransport {
 public:
  using Log = std::function<void(const std::string&)>;

  // Rewrites `runtime` in place when it is a pipe: the loopback endpoint of a forwarder started
  // here. A pipe `listen` is served from Listen on (the gRPC server then takes handed
  // connections: ProxyOptions::handed_connections). Throws std::runtime_error.
  PipeTransport(Endpoint& listen, Endpoint& runtime, std::string sddl, Log info, Log warn);
  ~PipeTransport();
  PipeTransport(const PipeTransport&) = delete;
  PipeTransport& operator=(const PipeTransport&) = delete;

  // Whether `listen` was a pipe, i.e. whether Admits must guard the gRPC server.
  bool serves_pipe() const { return acceptor_ != nullptr; }
  // For the gRPC server's admission hook: true when `grpc_peer` is the name gRPC gave one of the
  // acceptor's live handed connections (own_connections.h); logs a warning otherwise.
  bool Admits(std::string_view grpc_peer);
  // Once the gRPC server serves: opens the pipe; each client's connection is given to the server
  // by `hand`. Throws std::runtime_error (an invalid SDDL, the pipe name served by another
  // process).
  void Listen(socket_bridge::HandToServer hand);
  // Told the program of each client of the listening pipe (PipeAcceptor::set_on_client); before
  // Listen.
  void OnClient(std::function<void(const std::string&)> on_client) {
    if (acceptor_) acceptor_->set_on_client(std::move(on_client));
  }
  // Each admitted call counted for the pipe client it came from (cri_callers.h); before Listen.
  void RecordCallers(CriCallers* callers) { callers_ = callers; }
  // Listen waits up to `wait` while another process serves the pipe (PipeAcceptor::Start).
  void WaitForPipe(std::chrono::milliseconds wait);
  // Closes the pipe and the forwarder and every bridged connection. Idempotent.
  void Stop();

 private:
  // The bridge's end of a connection handed to the server as `served_as` (PipeAcceptor's dial).
  SOCKET Dial(std::string& served_as);

  WinsockSession winsock_;  // first: the bridges' sockets need it
  Endpoint pipe_;
  Log info_;
  Log warn_;
  socket_bridge::HandToServer hand_;  // set by Listen, before the pipe opens
  std::unique_ptr<PipeAcceptor> acceptor_;
  CriCallers* callers_ = nullptr;
  socket_bridge::PeerAdmission admit_;  // over the acceptor's connections; empty without it
  std::unique_ptr<PipeForwarder> forwarder_;
};

}  // namespace dxshim::windows
