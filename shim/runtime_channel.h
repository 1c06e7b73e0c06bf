// The channel to the runtime (containerd): one per process, shared by every proxied call.
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "shim/endpoint.h"

namespace dxshim {

// No message size limit on this leg; calls fail fast (UNAVAILABLE) while the runtime is down,
// and the channel reconnects by itself with a backoff capped at `max_backoff`.
std::shared_ptr<grpc::Channel> DialRuntime(const Endpoint& runtime,
                                           std::chrono::milliseconds max_backoff);

// Logs one line whenever the runtime connection changes state (connected, lost, ...).
class ConnectivityLog {
 public:
  ConnectivityLog(std::shared_ptr<grpc::Channel> channel, std::string runtime);
  ~ConnectivityLog();
  ConnectivityLog(const ConnectivityLog&) = delete;
  ConnectivityLog& operator=(const ConnectivityLog&) = delete;

 private:
  void Run();
  std::shared_ptr<grpc::Channel> channel_;
  std::string runtime_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace dxshim
