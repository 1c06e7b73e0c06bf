// The channel to the runtime (containerd): one per process, shared by every proxied call.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/completion_queue.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "shim/proxy/call_tag.h"
#include "shim/proxy/endpoint.h"
#include "shim/proxy/proxy_observer.h"

namespace dxshim {

// No message size limit on this leg; calls fail fast (UNAVAILABLE) while the runtime is down,
// and the channel reconnects by itself with a backoff capped at `max_backoff`.
std::shared_ptr<grpc::Channel> DialRuntime(const Endpoint& runtime,
                                           std::chrono::milliseconds max_backoff);

// Logs one line whenever the runtime connection changes state (connected, lost, ...), and tells
// `observer` (may be null) every state it sees, the initial one included. It watches
// through the proxy's completion queue: a watcher polling the channel from a thread of its own
// would take the channel's network events away from the relay thread and add a thread hop to
// every call (measured: 3.6 instead of 11 context switches per call).
class ConnectivityLog final : public CallTag {
 public:
  ConnectivityLog(std::shared_ptr<grpc::Channel> channel, std::string runtime,
                  grpc::CompletionQueue* cq, ProxyObserver* observer = nullptr);
  // Stops re-arming; returns at once. done() is true once the last watch has completed.
  void Stop() { stopping_ = true; }
  bool done() const { return done_; }
  void Complete(bool ok) override;

 private:
  void Arm();
  std::shared_ptr<grpc::Channel> channel_;
  std::string runtime_;
  grpc::CompletionQueue* cq_;
  ProxyObserver* observer_;
  grpc_connectivity_state state_;
  grpc_connectivity_state logged_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> done_{false};
};

}  // namespace dxshim
