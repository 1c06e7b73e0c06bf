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

namespace dxshim::windows {

// Decides, once the socket's side has sent its first bytes and before they go on, whether the
// connection may continue (false ends the bridge). Runs on the bridge's own thread.
using SocketAdmission = std::function<bool(SOCKET)>;

// Owns the pipe handle and the socket from construction; two threads copy, one per direction.
class PipeBridge {
 public:
  PipeBridge(HANDLE pipe, SOCKET socket, SocketAdmission admit = {});
  ~PipeBridge();  // Stop() and join
  PipeBridge(const PipeBridge&) = delete;
  PipeBridge& operator=(const PipeBridge&) = delete;

  void Stop();  // ends both directions; idempotent
  bool finished() const { return finished_ == 2; }
  std::uint16_t socket_local_port() const { return socket_local_port_; }

 private:
  void PipeToSocket();
  void SocketToPipe();
  void DirectionDone();

  HANDLE pipe_;
  SOCKET socket_;
  SocketAdmission admit_;
  std::uint16_t socket_local_port_;  // identifies the connection to the loopback server
  HANDLE stop_;                      // manual-reset event: set when either side is done
  std::atomic<int> finished_{0};
  std::thread pipe_to_socket_;
  std::thread socket_to_pipe_;
};

// The bridges of one acceptor or dialer: finished ones are reaped as new ones start, all are
// stopped and joined on StopAll().
class BridgeSet {
 public:
  void Add(HANDLE pipe, SOCKET socket, SocketAdmission admit = {});
  void StopAll();
  std::size_t active();
  // True while a bridge that is not finished owns a socket with this local port.
  bool HasLiveSocketFromPort(std::uint16_t port);

 private:
  void ReapLocked();
  std::mutex mutex_;
  std::list<std::unique_ptr<PipeBridge>> bridges_;
};

}  // namespace dxshim::windows
