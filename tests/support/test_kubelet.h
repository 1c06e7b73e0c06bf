// A stand-in for kubelet's device manager, speaking the real device plugin API (v1beta1) over
// real unix sockets in a test directory: it serves Registration on kubelet.sock, and after each
// registration dials the plugin's endpoint and keeps its ListAndWatch stream open, as kubelet
// does. Allocate() picks healthy, unallocated devices the way the device manager does and returns
// what kubelet would copy into the container's CRI config. Only kubelet is stood in for here:
// dxshim, gRPC and the sockets are real.
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
#include "shim/socket_bridge/socket_file.h"

namespace dxshim::test {

class TestKubelet {
 public:
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
  // Ends the plugin's ListAndWatch stream and forgets the plugin, as a kubelet that lost it
  // would; kubelet.sock stays the same file.
  void DropPlugin();
  // Stops serving and removes kubelet.sock (kubelet is down).
  void Stop();
  void Start();

  // The n-th Register call (from 1) within `timeout`, or nullopt.
  std::optional<v1beta1::RegisterRequest> WaitForRegistration(std::size_t n,
                                                              std::chrono::milliseconds timeout);
  std::size_t registrations();
  // The Register calls this kubelet took since it last started (a restart starts it again).
  std::size_t registrations_since_start();
  // Waits until this kubelet, since it last started, has taken a registration.
  bool WaitForRegistrationSinceStart(std::chrono::milliseconds timeout);

  // Waits until the latest ListAndWatch list satisfies `accept` (and returns it), or nullopt.
  template <typename Accept>
  std::optional<std::vector<v1beta1::Device>> WaitForDevices(Accept accept,
                                                             std::chrono::milliseconds timeout);
  std::size_t lists_received();

  // The device manager's Allocate for one container asking for `count` devices: healthy ones not
  // allocated yet. On success fills `annotations` (what kubelet copies into the container's CRI
  // config) and `devices`; an error status when too few are free (kubelet's admission error)
  // or the plugin refuses.
  grpc::Status Allocate(unsigned count, std::map<std::string, std::string>* annotations,
                        std::vector<std::string>* devices = nullptr);
  // A pod's devices return to the free pool (the pod was deleted).
  void Free(const std::vector<std::string>& devices);
  // Calls the plugin's Allocate directly with these ids.
  grpc::Status AllocateIds(const std::vector<std::string>& ids, v1beta1::AllocateResponse* out);
  std::unique_ptr<v1beta1::DevicePlugin::Stub> PluginStub();

 private:
  class Registration;
  void Watch(std::string endpoint);
  void StopWatching();
  // gRPC's target for the socket `name` in the directory.
  std::string TargetOf(const std::string& name) const;

  const std::string dir_;
  const socket_bridge::SocketFamily family_;
  std::unique_ptr<Registration> service_;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<v1beta1::RegisterRequest> requests_;
  std::size_t requests_at_start_ = 0;
  std::vector<v1beta1::Device> devices_;  // the latest list
  std::size_t lists_ = 0;
  std::set<std::string> allocated_;
  std::shared_ptr<grpc::ClientContext> watch_context_;
  std::thread watcher_;
};

template <typename Accept>
std::optional<std::vector<v1beta1::Device>> TestKubelet::WaitForDevices(
    Accept accept, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return lists_ > 0 && accept(devices_); })) {
    return std::nullopt;
  }
  return devices_;
}

// Prints how many kubelet restarts dxshim's log `log` says it noticed by each sign (the end of
// kubelet's ListAndWatch stream, a new kubelet.sock, its own socket removed), and how many
// registrations `kubelet` took in all.
void PrintRestartSigns(const std::string& log, TestKubelet& kubelet);

// How many devices of a list are healthy.
std::size_t HealthyCount(const std::vector<v1beta1::Device>& devices);

}  // namespace dxshim::test
