// kubelet's DevicePlugin service as dxshim serves it, for one resource (plugin_resource.h: pod
// slots or memory units). ListAndWatch sends the resource's devices at once and again whenever
// the device snapshot or the runtime's record changes them; Allocate hands kubelet, per
// container, the resource's annotation (dxshim.io/plugin-slots, dxshim.io/plugin-memory-units)
// that CreateContainer reads to know how many GPUs, or how much memory, the container asked for
// (which GPUs is decided there, by dxshim's policy and the pod's dxshim.io/ annotations).
//
// It runs in its own process (`dxshim device-plugin`, see plugin_process.h): inside the proxy,
// any second gRPC server, synchronous or callback, slowed every relayed call. Callback API here
// too, so the process needs no handler thread per stream: one thread waits for snapshot
// changes and pushes them to the open streams.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "devices/device_source.h"
#include "shim/device_plugin/plugin_resource.h"
#include "shim/socket_bridge/own_connections.h"

namespace dxshim::device_plugin {

// Whether a call from gRPC peer `peer` ("ipv4:127.0.0.1:54321") may be answered: behind the
// socket bridge only the bridge's own connections are (socket_bridge::AdmitOnlyThrough); a
// refused call gets PERMISSION_DENIED.
using PeerAdmission = socket_bridge::PeerAdmission;
// Told when kubelet's ListAndWatch stream `number` (numbered from 1 as they open) ended while the
// service was not stopping: kubelet closed it or went away (a kubelet that dies closes its
// connections). Runs on a gRPC thread; must not call back into the service.
using WatchEnded = std::function<void(std::uint64_t number)>;

// The metadata key of a ListAndWatch that is not kubelet's but an observer's (`dxshim doctor`
// asking what the plugin advertises): its stream is answered the same, but neither numbered nor
// told when it ends, so that its end is never taken for a kubelet that went away.
inline constexpr char kObserverMetadata[] = "dxshim-observer";

// How long after an Allocate the resource's list is worked out again (kubelet's checkpoint then
// says which pod the allocation was for).
inline constexpr std::chrono::milliseconds kRecountAfterAllocate{1000};

class DevicePluginService final : public v1beta1::DevicePlugin::CallbackService {
 public:
  // No `admit`: every caller is answered (gRPC's own unix socket, whose file mode guards it).
  DevicePluginService(const devices::DeviceSnapshot& snapshot, PluginResource& resource,
                      RuntimeRecord record = {}, PeerAdmission admit = {},
                      WatchEnded watch_ended = {});
  // Stop() first, and the server shut down.
  ~DevicePluginService() override;

  // Ends the open ListAndWatch streams and the change watcher, so that the server can shut down.
  void Stop();
  // The runtime's record (who holds which GPU): the devices held by pods the scheduler does not
  // count are worked out from it and the current GPUs (PluginResource::Advertised) whenever
  // either changes; the open streams get the new list when it changes what is healthy.
  void SetRecord(RuntimeRecord record);
  // How many ListAndWatch streams have opened so far (the number of the latest).
  std::uint64_t watches_opened();

  grpc::ServerUnaryReactor* GetDevicePluginOptions(grpc::CallbackServerContext* context,
                                                   const v1beta1::Empty* request,
                                                   v1beta1::DevicePluginOptions* response) override;
  grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse>* ListAndWatch(
      grpc::CallbackServerContext* context, const v1beta1::Empty* request) override;
  grpc::ServerUnaryReactor* GetPreferredAllocation(
      grpc::CallbackServerContext* context, const v1beta1::PreferredAllocationRequest* request,
      v1beta1::PreferredAllocationResponse* response) override;
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* context,
                                     const v1beta1::AllocateRequest* request,
                                     v1beta1::AllocateResponse* response) override;
  grpc::ServerUnaryReactor* PreStartContainer(
      grpc::CallbackServerContext* context, const v1beta1::PreStartContainerRequest* request,
      v1beta1::PreStartContainerResponse* response) override;

 private:
  class Watch;  // one ListAndWatch stream
  bool Admitted(grpc::CallbackServerContext* context) const;
  // After an Allocate: the list now, and again kRecountAfterAllocate later.
  void Recount();
  void RecountLater();
  void UpdateLocked(const char* why);
  void Forget(Watch* watch, std::uint64_t number);

  const devices::DeviceSnapshot& snapshot_;
  PluginResource& resource_;
  const PeerAdmission admit_;
  const WatchEnded watch_ended_;
  std::mutex mutex_;  // before a Watch's own
  std::set<Watch*> watches_;
  std::uint64_t watches_opened_ = 0;
  std::vector<PluginDevice> current_;
  RuntimeRecord record_;
  SchedulerGap gap_;  // from record_ and the devices of the last update
  bool stopping_ = false;
  std::unique_ptr<devices::SnapshotFollower> follower_;
  std::condition_variable recount_cv_;
  std::optional<std::chrono::steady_clock::time_point> recount_at_;
  std::thread recounter_;  // started by the first Allocate
};

}  // namespace dxshim::device_plugin
