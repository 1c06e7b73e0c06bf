// Keeps the allocator's ledger in line with the runtime: at start-up (before GPU requests are
// served) and then periodically, or at once when kicked (a request found no free device: maybe a
// pod was stopped or removed behind dxshim's back), it lists the runtime's sandboxes and
// containers and rebuilds who holds what: a ready sandbox holds the devices its containers'
// dxshim.io/devices labels name, whatever state those containers are in.
#pragma once

#include <grpcpp/client_context.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "devices/allocation/allocator.h"
#include "runtime/v1/api.grpc.pb.h"
#include "shim/gpu/sandbox_handlers.h"
#include "shim/proxy/endpoint.h"

namespace dxshim {

// What a ListPodSandbox and a ListContainers answer say about who holds devices: the ready
// sandboxes, and every container that carries the dxshim.io/devices label.
devices::RuntimeRecord ReadRuntimeRecord(const runtime::v1::ListPodSandboxResponse& sandboxes,
                                         const runtime::v1::ListContainersResponse& containers);

// The runtime handler of every sandbox a ListPodSandbox answer lists.
std::map<std::string, std::string> ReadSandboxHandlers(
    const runtime::v1::ListPodSandboxResponse& sandboxes);

class LedgerSync {
 public:
  // Called after each resync with what the runtime said (the device plugin's view of it).
  using Observer = std::function<void(const devices::RuntimeRecord&)>;
  // Called after each resync attempt: whether the runtime could be listed, and how long it took.
  using ResyncTimer = std::function<void(bool ok, std::chrono::steady_clock::duration took)>;
  // `name` starts its log lines.
  LedgerSync(const Endpoint& runtime, devices::Allocator& allocator,
             std::chrono::milliseconds interval, Observer observer = {},
             std::string name = "ledger");
  ~LedgerSync();
  LedgerSync(const LedgerSync&) = delete;
  LedgerSync& operator=(const LedgerSync&) = delete;

  // One resync now; false (logged) when the runtime could not be listed within `timeout`. With
  // `wait_for_runtime` false a runtime that is down fails the call at once.
  bool SyncOnce(std::chrono::milliseconds timeout, bool wait_for_runtime = true);
  // Resyncs every interval, and soon after Kick(), until destruction. Retries every second
  // while the runtime cannot be listed.
  void Start();
  void Kick();
  // Before the first SyncOnce or Start.
  void set_resync_timer(ResyncTimer timer) { timer_ = std::move(timer); }
  // Before the first SyncOnce or Start: each resync also tells `handlers` which runtime handler
  // runs each sandbox the runtime lists.
  void set_sandbox_handlers(SandboxHandlers* handlers) { handlers_ = handlers; }

 private:
  devices::Allocator& allocator_;
  std::chrono::milliseconds interval_;
  Observer observer_;
  ResyncTimer timer_;
  SandboxHandlers* handlers_ = nullptr;
  std::string name_;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> stub_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool kicked_ = false;
  grpc::ClientContext* listing_ = nullptr;  // the ListContainers in flight, for cancellation
  bool failing_ = false;                    // log a failure once, not every retry
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dxshim
