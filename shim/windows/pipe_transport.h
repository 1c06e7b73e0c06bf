// Windows only, no gRPC: the named-pipe side of `dxshim serve`. Kubelet and containerd speak
// over named pipes on Windows, which gRPC C++ cannot, so each pipe endpoint is bridged to
// loopback TCP:
//   kubelet -> \\.\pipe\dxshim (pipe-sddl) -> PipeAcceptor -> 127.0.0.1:<gRPC server port>
//   gRPC channel -> 127.0.0.1:<forwarder port> -> PipeForwarder -> \\.\pipe\containerd-containerd
// The gRPC server must admit only calls whose peer is one of the acceptor's bridges (Admits), or
// any local process could reach it around the pipe's security descriptor; the forwarder bridges
// only this process's connections, or any local user could reach containerd through it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shim/proxy/cri_callers.h"
#include "shim/proxy/endpoint.h"
#include "shim/windows/loopback.h"
#include "shim/windows/pipe_acceptor.h"
#include "shim/windows/pipe_dialer.h"

namespace dxshim::windows {

class PipeTransport {
 public:
  using Log = std::function<void(const std::string&)>;

  // Rewrites the endpoints gRPC will use, in place: a pipe `runtime` becomes the loopback
  // endpoint of a forwarder started here; a pipe `listen` becomes 127.0.0.1:0 (the pipe opens in
  // Listen). Other endpoints are left alone. Throws std::runtime_error.
  PipeTransport(Endpoint& listen, Endpoint& runtime, std::string sddl, Log info, Log warn);
  ~PipeTransport();
  PipeTransport(const PipeTransport&) = delete;
  PipeTransport& operator=(const PipeTransport&) = delete;

  // Whether `listen` was a pipe, i.e. whether Admits must guard the gRPC server.
  bool serves_pipe() const { return acceptor_ != nullptr; }
  // For the gRPC server's admission hook: true when `grpc_peer` ("ipv4:127.0.0.1:54321") is
  // exactly, address and port, the local end of one of the acceptor's live bridge connections,
  // which the TCP table names as this process's (own_connections.h); logs a warning otherwise.
  bool Admits(std::string_view grpc_peer);
  // Once the gRPC server listens on `grpc_port`: opens the pipe. Throws std::runtime_error (an
  // invalid SDDL, the pipe name served by another process).
  void Listen(int grpc_port);
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
  WinsockSession winsock_;  // first: the bridges' sockets need it
  Endpoint pipe_;
  Log info_;
  Log warn_;
  std::atomic<int> backend_port_{0};
  std::unique_ptr<PipeAcceptor> acceptor_;
  CriCallers* callers_ = nullptr;
  socket_bridge::PeerAdmission admit_;  // over the acceptor's connections; empty without it
  std::unique_ptr<PipeForwarder> forwarder_;
};

}  // namespace dxshim::windows
