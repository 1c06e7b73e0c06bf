// Reads the runtime record (runtime_record.h) from the runtime: at start-up and then
// periodically, or at once when kicked (a request found no free device: maybe a pod was stopped or
// removed behind dxshim's back), it lists the runtime's sandboxes and containers and hands what
// they say to its consumer. `serve` feeds its ledger from it (shim/gpu/ledger_feed.h); the device
// plugin process feeds its count of the slots the scheduler does not see.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/v1/api.grpc.pb.h"
#include "shim/proxy/endpoint.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim {

class RuntimeRecordPoller {
 public:
  // What one listing of the runtime said.
  struct Listing {
    RuntimeRecord record;
    std::map<std::string, std::string> sandbox_handlers;  // ReadSandboxHandlers
    int sandboxes = 0;                                    // sandboxes listed
    int containers = 0;                                   // containers listed
  };
  struct Consumer {
    // Before each listing (may be empty): what passes through dxshim while the runtime is being
    // listed must not be lost (the ledger journals it).
    std::function<void()> starting;
    // With what the runtime said; returns how many pods hold GPUs, for the log.
    std::function<std::size_t(const Listing&)> listed;
  };
  // Called after each attempt: whether the runtime could be listed, and how long it took.
  using ResyncTimer = std::function<void(bool ok, std::chrono::steady_clock::duration took)>;
  // `name` starts its log lines.
  RuntimeRecordPoller(const Endpoint& runtime, std::chrono::milliseconds interval,
                      Consumer consumer, std::string name = "ledger");
  ~RuntimeRecordPoller();
  RuntimeRecordPoller(const RuntimeRecordPoller&) = delete;
  RuntimeRecordPoller& operator=(const RuntimeRecordPoller&) = delete;

  // One listing now; false (logged) when the runtime could not be listed within `timeout`. With
  // `wait_for_runtime` false a runtime that is down fails the call at once.
  bool SyncOnce(std::chrono::milliseconds timeout, bool wait_for_runtime = true);
  // Lists every interval, and soon after Kick(), until destruction. Retries every second while
  // the runtime cannot be listed.
  void Start();
  void Kick();
  // Before the first SyncOnce or Start.
  void set_resync_timer(ResyncTimer timer) { timer_ = std::move(timer); }

 private:
  // Lists the runtime's sandboxes, then its containers, under one deadline; either listing is
  // cancelled when the poller is destroyed.
  grpc::Status ListRuntime(std::chrono::milliseconds timeout, bool wait_for_runtime,
                           runtime::v1::ListPodSandboxResponse& sandboxes,
                           runtime::v1::ListContainersResponse& containers);

  Consumer consumer_;
  std::chrono::milliseconds interval_;
  ResyncTimer timer_;
  std::string name_;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> stub_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool kicked_ = false;
  bool listed_ = false;                     // a listing succeeded once
  grpc::ClientContext* listing_ = nullptr;  // the listing in flight, for cancellation
  bool failing_ = false;                    // log a failure once, not every retry
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dxshim
