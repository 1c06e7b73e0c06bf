// Windows only, no gRPC: copies bytes both ways between a named pipe and a TCP socket (dxshim's
// gRPC endpoints on loopback) until either side closes or fails, then closes both. Every wait
// also watches a stop event, so a bridge can be torn down from outside at any moment.
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "shim/socket_bridge/own_connections.h"

namespace dxshim::windows {

// Decides, once the socket's side has sent its first bytes and before they go on, whether the
// connection may continue (false ends the bridge). Runs on the bridge's own thread.
using SocketAdmission = std::function<bool(SOCKET)>;

using socket_bridge::OwnConnections;

// Owns the pipe handle and the socket from construction; two threads copy, one per direction.
// `listed` keeps the socket's connection among a server's own (own_connections.h) until just
// before the socket closes.
class PipeBridge {
 public:
  PipeBridge(HANDLE pipe, SOCKET socket, SocketAdmission admit = {},
             OwnConnections::Registration listed = {});
  ~PipeBridge();  // Stop() and join
  PipeBridge(const PipeBridge&) = delete;
  PipeBridge& operator=(const PipeBridge&) = delete;

  void Stop();  // ends both directions; idempotent
  bool finished() const { return finished_ == 2; }

 private:
  void PipeToSocket();
  void SocketToPipe();
  void DirectionDone();

  HANDLE pipe_;
  SOCKET socket_;
  SocketAdmission admit_;
  OwnConnections::Registration listed_;
  HANDLE stop_;  // manual-reset event: set when either side is done
  std::atomic<int> finished_{0};
  std::thread pipe_to_socket_;
  std::thread socket_to_pipe_;
};

// The bridges of one acceptor or dialer: finished ones are reaped as new ones start, all are
// stopped and joined on StopAll().
class BridgeSet {
 public:
  void Add(HANDLE pipe, SOCKET socket, SocketAdmission admit = {},
           OwnConnections::Registration listed = {});
  void StopAll();
  std::size_t active();

 private:
  void ReapLocked();
  std::mutex mutex_;
  std::list<std::unique_ptr<PipeBridge>> bridges_;
};

}  // namespace dxshim::windows
