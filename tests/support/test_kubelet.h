// A stand-in for kubelet's device manager (kubernetes pkg/kubelet/cm/devicemanager, as of kubelet
// v1.26), speaking the real device plugin API (v1beta1) over real unix sockets in a test
// directory (or, for wine, the loopback TCP stand-in files of socket_file.h). Only kubelet is
// stood in for: dxshim, gRPC and the sockets are real. What it does as kubelet does, with the
// upstream file each part follows (paths under pkg/kubelet/cm/devicemanager unless named
// otherwise; where kubelet's newest sources differ from the v1.26 line, the .cpp says so):
//
// - Registration (plugin/v1beta1/server.go Register, handler.go connectClient, client.go Connect,
//   manager.go PluginConnected): serves Registration on kubelet.sock; inside each Register call it
//   dials the plugin's endpoint and asks GetDevicePluginOptions, once per registration, before
//   answering (a failure there fails the Register call); the ListAndWatch stream is then read on a
//   thread of its own (client.go Run), which may reach the plugin before or after the answer does.
//   One plugin per resource name: a registration replaces the previous plugin of its resource
//   only. A stream that ends leaves the resource registered with no healthy device
//   (PluginDisconnected, markResourceUnhealthy).
// - Admission (manager.go Allocate, allocateContainerResources, devicesToAllocate,
//   callGetPreferredAllocationIfAvailable; pod_devices.go add/removeContainerAllocatedResources;
//   pkg/kubelet/cm/topologymanager/scope.go admitPolicyNone; pkg/kubelet/cm/admission/errors.go):
//   AdmitPod allocates a pod container by container, init containers first, each resource of a
//   container with one Allocate call; an init container's devices may be reused by the
//   containers after it. Devices are picked from the healthy, unallocated ones in a random order
//   (kubelet iterates Go sets), after the plugin's GetPreferredAllocation answer when it offers
//   one. A failure fails the pod with kubelet's UnexpectedAdmissionError. The topology manager's
//   policy is `none` (kubelet's default): no NUMA alignment.
// - The checkpoint (checkpoint/checkpoint.go, manager.go writeCheckpoint, pod_devices.go
//   toCheckpointData): kubelet_internal_checkpoint in the directory, in kubelet's format, written
//   after every device list and every container that got devices: one PodDeviceEntries item per
//   pod UID, container name and resource.
//
// Calls about one resource take its name last (default: dxshim.io/gpu).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "shim/base/dxshim_keys.h"
#include "shim/socket_bridge/socket_file.h"

namespace dxshim::test {

class TestKubelet {
 public:
  static constexpr const char* kGpu = keys::kGpuResource;
  static constexpr const char* kGpuMemory = keys::kGpuMemoryResource;
  // The seed of the random order devices are picked in, unless set_seed says otherwise: fixed,
  // so that a test's picks are the same from run to run.
  static constexpr std::uint32_t kDefaultSeed = 20230106;

  // One container of a pod as the device manager sees it: its name, whether it is an init
  // container, and its limits of device plugin resources (resource name -> count).
  struct ContainerAsk {
    std::string name;
    bool init = false;
    std::map<std::string, unsigned> limits;
  };
  // What an admitted pod got, per container: the annotations kubelet copies into the container's
  // CRI config (every resource's Allocate answer merged, as kubelet's deviceRunContainerOptions
  // does) and the device ids of each resource (in the order of its Allocate request).
  struct PodAdmission {
    std::string uid;
    // container -> annotation -> value
    std::map<std::string, std::map<std::string, std::string>> annotations;
    // container -> resource -> device ids
    std::map<std::string, std::map<std::string, std::vector<std::string>>> devices;
  };

  // Serves kubelet.sock in `dir` at once unless `start` is false.
  explicit TestKubelet(std::string dir, bool start = true,
                       socket_bridge::SocketFamily family = socket_bridge::SocketFamily::kUnix);
  ~TestKubelet();
  TestKubelet(const TestKubelet&) = delete;
  TestKubelet& operator=(const TestKubelet&) = delete;

  // What a restart does with the plugins' sockets in its directory.
  enum class PluginSockets { kRemoved, kKept };
  // As kubelet does when it starts again: stops (its ListAndWatch stream ends), removes every
  // socket in its directory (the plugin's too, as kubelet's CleanupPluginDirectory does; with
  // kKept only kubelet.sock, which a plugin then cannot see vanish), and serves a new
  // kubelet.sock at once. The pods' devices are kept (kubelet reads them back from its
  // checkpoint); each resource stays registered with no healthy device until its plugin
  // registers again and lists.
  void Restart(PluginSockets plugin_sockets = PluginSockets::kRemoved);
  // Ends the ListAndWatch stream of `resource`'s plugin and forgets its devices, as a kubelet that
  // lost it would; kubelet.sock stays the same file.
  void DropPlugin(const std::string& resource = kGpu);
  // Stops serving and removes kubelet.sock (kubelet is down).
  void Stop();
  void Start();

  // The n-th Register call (from 1) for `resource` within `timeout`, or nullopt.
  std::optional<v1beta1::RegisterRequest> WaitForRegistration(std::size_t n,
                                                              std::chrono::milliseconds timeout,
                                                              const std::string& resource = kGpu);
  std::size_t registrations(const std::string& resource = kGpu);
  // The Register calls for `resource` this kubelet took since it last started (a restart starts
  // it again).
  std::size_t registrations_since_start(const std::string& resource = kGpu);
  // Waits until this kubelet, since it last started, has taken a registration for `resource`.
  bool WaitForRegistrationSinceStart(std::chrono::milliseconds timeout,
                                     const std::string& resource = kGpu);
  // The options GetDevicePluginOptions gave at the registration of `resource`'s current plugin
  // (nullopt before one, and after a restart until the next).
  std::optional<v1beta1::DevicePluginOptions> PluginOptions(const std::string& resource = kGpu);
  // How many GetPreferredAllocation calls kubelet made to `resource`'s plugins.
  std::size_t preferred_allocation_calls(const std::string& resource = kGpu);

  // Waits until the latest ListAndWatch list of `resource` satisfies `accept` (and returns it),
  // or nullopt.
  template <typename Accept>
  std::optional<std::vector<v1beta1::Device>> WaitForDevices(Accept accept,
                                                             std::chrono::milliseconds timeout,
                                                             const std::string& resource = kGpu);
  std::size_t lists_received(const std::string& resource = kGpu);

  // Admits pod `uid` as kubelet does (see the opening comment): on success fills `out`; otherwise
  // an error status whose message is kubelet's (UnexpectedAdmissionError: Allocate failed due
  // to ..., which is unexpected), RESOURCE_EXHAUSTED when the device manager found too few
  // devices, the plugin's own code when the plugin refused a call. A resource no plugin has
  // listed (and of which nothing is allocated) is not the device manager's: kubelet admits such a
  // limit without devices (the predicate admit handler, pkg/kubelet/lifecycle/predicate.go, drops
  // the requests of extended resources the node does not have). A rejected pod's devices are
  // released as kubelet releases them: at the next admission of another pod (until then its
  // partial entries stay in the checkpoint). Calling it again for an admitted pod gives each
  // container what it already has (no Allocate call), as kubelet does when it admits a pod again.
  grpc::Status AdmitPod(const std::string& uid, const std::vector<ContainerAsk>& containers,
                        PodAdmission* out);
  // AdmitPod for a pod of a fresh UID with one container, "app", asking for `count` devices of
  // `resource`: fills `annotations` (what kubelet copies into the container's CRI config) and
  // `devices`.
  grpc::Status Allocate(unsigned count, std::map<std::string, std::string>* annotations,
                        std::vector<std::string>* devices = nullptr,
                        const std::string& resource = kGpu);
  // These devices of `resource` return to the free pool at once, whichever pod had them (entries
  // left empty are dropped). Not something kubelet does with single devices: a test's shortcut
  // for "the pod that had them was deleted".
  void Free(const std::vector<std::string>& devices, const std::string& resource = kGpu);
  // Every device of pod `uid` returns to the free pool at once, and the checkpoint drops its
  // entries (the pod was deleted). Kubelet does this later: at the next admission that asks for a
  // device plugin resource (UpdateAllocatedDevices), its checkpoint at the next write after that.
  void FreePod(const std::string& uid);
  // The seed of the random order devices are picked in (kDefaultSeed until set); setting it
  // starts the sequence again.
  void set_seed(std::uint32_t seed);
  // From now on every Register call is refused (INVALID_ARGUMENT), as kubelet refuses a plugin.
  void set_refuse_registrations(bool refuse);
  // What the device manager would find free for `resource` now: its healthy devices not
  // allocated to a pod (devicesToAllocate's `available`), as a count.
  std::size_t Available(const std::string& resource = kGpu);
  // Calls the Allocate of `resource`'s plugin directly with these ids.
  grpc::Status AllocateIds(const std::vector<std::string>& ids, v1beta1::AllocateResponse* out,
                           const std::string& resource = kGpu);
  std::unique_ptr<v1beta1::DevicePlugin::Stub> PluginStub(const std::string& resource = kGpu);

 private:
  class Registration;
  // What kubelet keeps about one resource's plugin.
  struct Plugin {
    std::vector<v1beta1::Device> devices;  // the latest list
    std::size_t lists = 0;
    std::uint64_t watches = 0;  // numbers its streams: only the newest one's lists count
    // A list came once (kubelet's healthyDevices has the resource; kept through a dropped plugin
    // and a restart, as kubelet keeps it until a grace period long past any test).
    bool registered = false;
    bool stream_ended = false;  // the newest stream ended by itself: no healthy device
    std::string endpoint;       // of the current plugin
    std::optional<v1beta1::DevicePluginOptions> options;  // asked at its registration
    std::size_t preferred_calls = 0;
    std::shared_ptr<grpc::ClientContext> watch_context;
    std::thread watcher;
  };
  // One PodDeviceEntries item: the devices of one resource allocated to one container, per NUMA
  // node (-1: none), and the plugin's Allocate answer for it.
  struct Entry {
    std::vector<std::string> requested;  // in the Allocate request's order
    std::map<std::int64_t, std::vector<std::string>> ids;
    v1beta1::ContainerAllocateResponse response;
  };
  struct Pod {
    std::map<std::string, std::map<std::string, Entry>> containers;  // container -> resource
    bool rejected = false;  // its admission failed: dropped at the next admission of another pod
  };

  void Watch(std::string endpoint, std::string resource, v1beta1::DevicePluginOptions options);
  void StopWatching(const std::string& resource);
  void StopWatchingAll();
  std::size_t RegistrationsLocked(const std::string& resource, std::size_t from) const;
  // Writes kubelet_internal_checkpoint in the directory as kubelet's device manager does after
  // each device list and allocation.
  void WriteCheckpointLocked();
  // gRPC's target for the socket `name` in the directory.
  std::string TargetOf(const std::string& name) const;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> StubOf(const std::string& endpoint) const;

  // Admission, in kubelet's steps (see the .cpp).
  grpc::Status AllocateContainer(const std::string& uid, const ContainerAsk& container,
                                 std::map<std::string, std::set<std::string>>& reusable);
  grpc::Status DevicesToAllocate(const std::string& uid, const std::string& container,
                                 const std::string& resource, unsigned required,
                                 const std::set<std::string>& reusable,
                                 std::set<std::string>* chosen);
  void DropRejectedPodsLocked(const std::string& admitting);
  bool IsDevicePluginResourceLocked(const std::string& resource) const;
  std::set<std::string> HealthyLocked(const std::string& resource) const;
  std::set<std::string> AllocatedLocked(const std::string& resource) const;
  // A random permutation of `ids` (Go's set iteration order, as far as a test can tell).
  std::vector<std::string> RandomOrder(const std::set<std::string>& ids);

  const std::string dir_;
  const socket_bridge::SocketFamily family_;
  std::unique_ptr<Registration> service_;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<v1beta1::RegisterRequest> requests_;  // every resource's
  std::size_t requests_at_start_ = 0;
  std::map<std::string, Plugin> plugins_;      // by resource name
  std::map<std::string, Pod> pods_;            // by pod UID
  std::set<grpc::ClientContext*> connecting_;  // GetDevicePluginOptions calls of registrations
  bool refuse_registrations_ = false;
  std::mt19937 checkpoint_order_{kDefaultSeed};  // the order of the checkpoint's lists and maps

  // One admission at a time, as kubelet admits pods; the picks' random order is the admissions'.
  std::mutex admit_mutex_;
  std::mt19937 picks_{kDefaultSeed};
  std::uint64_t pods_made_ = 0;  // for Allocate's fresh UIDs
};

template <typename Accept>
std::optional<std::vector<v1beta1::Device>> TestKubelet::WaitForDevices(
    Accept accept, std::chrono::milliseconds timeout, const std::string& resource) {
  std::unique_lock lock(mutex_);
  auto& plugin = plugins_[resource];
  if (!cv_.wait_for(lock, timeout, [&] { return plugin.lists > 0 && accept(plugin.devices); })) {
    return std::nullopt;
  }
  return plugin.devices;
}

// Prints how many kubelet restarts dxshim's log `log` says it noticed by each sign (the end of
// kubelet's ListAndWatch stream, a new kubelet.sock, its own socket removed), and how many
// registrations `kubelet` took in all.
void PrintRestartSigns(const std::string& log, TestKubelet& kubelet);

// How many devices of a list are healthy.
std::size_t HealthyCount(const std::vector<v1beta1::Device>& devices);

}  // namespace dxshim::test
