// Accepts connections on a listening socket and bridges each (stream_bridge.h) to a new
// connection that `dial` makes: an AF_UNIX socket file in front of a gRPC server in this process
// (each client's connection handed to it, socket_pair.h and grpc_handoff.h), or a loopback port
// in front of an AF_UNIX socket file. An optional admission check runs on each connection's first
// bytes. Every connection handed to a gRPC server is listed among the forwarder's own
// (backend_connections(), own_connections.h) while its bridge lasts, so that the server can tell
// which of its calls came through this forwarder.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "shim/socket_bridge/stream_bridge.h"

namespace dxshim::socket_bridge {

class SocketForwarder {
 public:
  // A new connection to the backend, or invalid with `error` set (the accepted connection is
  // then closed, and the client sees its connection end). When the backend is a gRPC server in
  // this process, `served_as` gets the peer name gRPC gave the connection's other end
  // (HandToGrpcServer).
  using Dial = std::function<Socket(std::string& error, std::string& served_as)>;
  using Log = std::function<void(const std::string&)>;

  // Takes `listener` (listening already) and starts accepting on a thread of its own. `name`
  // says in log lines what the forwarder is for.
  SocketForwarder(Socket listener, std::string name, Dial dial, Admission admit = {},
                  Log warn = {});
  ~SocketForwarder();  // Stop()
  SocketForwarder(const SocketForwarder&) = delete;
  SocketForwarder& operator=(const SocketForwarder&) = delete;

  // Stops accepting and ends every bridged connection (within a poll interval); idempotent.
  void Stop();
  // The live bridges' connections handed to a gRPC server (by the names `dial` gave).
  OwnConnections& backend_connections() { return backend_connections_; }
  std::size_t active_connections();
  std::size_t failed_dials() const { return failed_dials_; }

 private:
  void AcceptLoop();
  void ReapLocked();

  Socket listener_;
  const std::string name_;
  Dial dial_;
  Admission admit_;
  Log warn_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> failed_dials_{0};
  std::string last_dial_error_;         // the accept thread's: said once until it changes
  OwnConnections backend_connections_;  // before bridges_: they unlist themselves from it
  std::mutex mutex_;
  std::list<std::unique_ptr<StreamBridge>> bridges_;
  std::thread thread_;
};

}  // namespace dxshim::socket_bridge
