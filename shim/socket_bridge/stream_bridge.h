// Copies bytes both ways between two connected sockets, on a thread of its own, until both
// directions have ended. One side's end of stream is passed on as a half-close (the other side's
// writing is shut down, its reading goes on), so a peer that sends and then closes its half still
// gets its answer; an error on either side (a reset, a peer gone mid-message) ends both at once.
// Non-blocking sockets and one poll loop: a slow reader holds back only its own direction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

// Decides, once the client side has sent its first bytes and before they go on, whether the
// connection may continue (false ends the bridge). Runs on the bridge's thread.
using Admission = std::function<bool(NativeSocket client)>;

class StreamBridge {
 public:
  // `client` is the accepted connection, `backend` the one dialed for it; `listed` keeps the
  // backend connection among a server's own (own_connections.h) until just before it closes.
  StreamBridge(Socket client, Socket backend, Admission admit = {},
               OwnConnections::Registration listed = {});
  ~StreamBridge();  // Stop() and join
  StreamBridge(const StreamBridge&) = delete;
  StreamBridge& operator=(const StreamBridge&) = delete;

  // Starts copying (separate from construction, so that the bridge can be registered first: the
  // backend may ask who its peer is as soon as the first bytes arrive).
  void Start();
  // Ends both directions within a poll interval and closes both sockets; idempotent.
  void Stop();
  bool finished() const { return finished_; }

 private:
  void Run();
  void Close();  // unlists the backend connection, then closes both sockets

  Socket client_;
  Socket backend_;
  Admission admit_;
  OwnConnections::Registration listed_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace dxshim::socket_bridge
