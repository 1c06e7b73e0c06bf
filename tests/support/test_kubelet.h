// A stand-in for kubelet's device manager, speaking the real device plugin API (v1beta1) over
// real unix sockets in a test directory: it serves Registration on kubelet.sock, and after each
// registration dials the plugin's endpoint and keeps its ListAndWatch stream open, as kubelet
// does, one plugin per resource name (a registration replaces the previous plugin of its
// resource only). Allocate() picks healthy, unallocated devices of a resource the way the device
// manager does and returns what kubelet would copy into the container's CRI config. Only kubelet
// is stood in for here: dxshim, gRPC and the sockets are real. Calls about one resource take its
// name last (default: dxshim.io/gpu). Like kubelet it keeps kubelet_internal_checkpoint in its
// directory, in kubelet's format.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "devices/dxshim_keys.h"
#include "shim/socket_bridge/socket_file.h"

namespace dxshim::test {

class TestKubelet {
 public:
  static constexpr const char* kGpu = keys::kGpuResource;
  static constexpr const char* kGpuMemory = keys::kGpuMemoryResource;

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
  // kubelet.sock at once.
  void Restart(PluginSockets plugin_sockets = PluginSockets::kRemoved);
  // Ends the ListAndWatch stream of `resource`'s plugin and forgets the plugin, as a kubelet that
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

  // Waits until the latest ListAndWatch list of `resource` satisfies `accept` (and returns it),
  // or nullopt.
  template <typename Accept>
  std::optional<std::vector<v1beta1::Device>> WaitForDevices(Accept accept,
                                                             std::chrono::milliseconds timeout,
                                                             const std::string& resource = kGpu);
  std::size_t lists_received(const std::string& resource = kGpu);

  // The device manager's Allocate for one container asking for `count` devices of `resource`:
  // healthy ones not allocated yet. On success fills `annotations` (what kubelet copies into the
  // container's CRI config) and `devices`; an error status when too few are free (kubelet's
  // admission error) or the plugin refuses.
  grpc::Status Allocate(unsigned count, std::map<std::string, std::string>* annotations,
                        std::vector<std::string>* devices = nullptr,
                        const std::string& resource = kGpu);
  // A pod's devices of `resource` return to the free pool (the pod was deleted).
  void Free(const std::vector<std::string>& devices, const std::string& resource = kGpu);
  // From now on every Register call is refused (INVALID_ARGUMENT), as kubelet refuses a plugin.
  void set_refuse_registrations(bool refuse);
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
    std::set<std::string> allocated;
    std::shared_ptr<grpc::ClientContext> watch_context;
    std::thread watcher;
  };
  void Watch(std::string endpoint, std::string resource);
  void StopWatching(const std::string& resource);
  void StopWatchingAll();
  std::size_t RegistrationsLocked(const std::string& resource, std::size_t from) const;
  // Writes kubelet_internal_checkpoint in the directory as kubelet's device manager does after
  // each device list and allocation.
  void WriteCheckpointLocked() const;
  // gRPC's target for the socket `name` in the directory.
  std::string TargetOf(const std::string& name) const;

  const std::string dir_;
  const socket_bridge::SocketFamily family_;
  std::unique_ptr<Registration> service_;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<v1beta1::RegisterRequest> requests_;  // every resource's
  std::size_t requests_at_start_ = 0;
  std::map<std::string, Plugin> plugins_;  // by resource name
  bool refuse_registrations_ = false;
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
