// dxshim's CRI endpoint: listens where kubelet connects and relays every call to the runtime.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>

#include "shim/proxy/endpoint.h"
#include "shim/proxy/proxied_call.h"
#include "shim/proxy/runtime_channel.h"
#include "shim/socket_bridge/grpc_handoff.h"
#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/socket_pair.h"

namespace dxshim {

struct ProxyOptions {
  Endpoint listen;
  Endpoint runtime;
  std::uint32_t socket_mode = 0660;  // unix sockets only
  std::chrono::milliseconds shutdown_grace{10000};
  std::chrono::milliseconds reconnect_backoff_max{2000};
  RequestInterceptor* interceptor = nullptr;  // not owned; may be null
  // No listening port: `listen` is served by a bridge that hands each of its clients'
  // connections to the server (ServeConnection), so that gRPC reads only what came through it
  // (Windows: kubelet's named pipe).
  bool handed_connections = false;
  // When set, only calls whose gRPC peer it admits are relayed (see ProxyShared::admit_peer).
  std::function<bool(std::string_view peer)> admit_peer;
  ProxyObserver* observer = nullptr;  // not owned; may be null
  LocalMethods local_methods;         // methods dxshim answers itself (local_method.h)
};

class ProxyServer {
 public:
  explicit ProxyServer(ProxyOptions options);
  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // Listens at once, whether or not the runtime is up. Throws std::runtime_error when the
  // endpoint cannot be used (another live server on the socket, a bad path, a port in use).
  void Start();
  // Stops accepting calls, cancels long-lived streams, lets other calls finish within the grace
  // period (then cancels them), and removes the socket. Idempotent.
  void Shutdown();
  // The TCP port listened on (after Start; 0 for a unix socket or handed connections).
  int bound_port() const { return bound_port_; }
  // With handed_connections, after Start: gives the server `connection` (a pair's server end,
  // socket_pair.h); the peer name gRPC gives its calls, or "" with `error` set.
  std::string ServeConnection(socket_bridge::Socket connection, std::string& error);
  // ServeConnection as a function a bridge may keep past this server: it fails once the server
  // shut down or is gone (the door is shared), never touching a destroyed server.
  socket_bridge::HandToServer Handoff() const;

 private:
  // The platform's part of listening (proxy_server_posix.cpp, proxy_server_windows.cpp). POSIX
  // readies a unix socket's path before the server is built, creates the socket under a
  // restrictive umask and then owns its file; Windows refuses a unix socket.
  void PrepareListen();
  std::unique_ptr<grpc::Server> BuildAndStart(grpc::ServerBuilder& builder);
  void OwnSocketFile();

  ProxyOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
  ProxyShared shared_;
  grpc::AsyncGenericService service_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<grpc::Server> server_;
  // Open while server_ serves (handed_connections); shared with the bridges' Handoff().
  std::shared_ptr<socket_bridge::HandoffDoor> handoff_ =
      std::make_shared<socket_bridge::HandoffDoor>();
  // Drains the completion queue: every completion of every call, both legs, runs here. One thread
  // keeps a call's hops on one core; the relay never blocks, so it is never the bottleneck of a
  // node's CRI traffic.
  std::thread cq_thread_;
  // A unix socket's file once it listens (its mode set, removed at Shutdown): a UnixSocketFile,
  // type-erased because Windows has none.
  std::shared_ptr<void> socket_file_;
  std::unique_ptr<ConnectivityLog> connectivity_log_;
  int bound_port_ = 0;
  bool stopped_ = false;
};

}  // namespace dxshim
