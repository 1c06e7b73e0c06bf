// dxshim's kubelet device plugin for one resource (plugin_resource.h): serves the DevicePlugin
// service on `<dir>/<endpoint>` and registers it with kubelet's Registration service on
// `<dir>/kubelet.sock`. `dxshim device-plugin` runs one per resource (pod slots on
// kSlotsEndpoint, memory units on kMemoryEndpoint), each on its own socket, as kubelet wants. A
// watcher thread keeps it registered across kubelet restarts, by three signs, any of which is
// enough:
// - its own socket vanished (kubelet removes the sockets in its directory when it starts): serve
//   again and register again;
// - kubelet.sock is a new file (device and inode, or volume and file index, and its creation
//   time): register again. A file removed and made again within one poll can get the same inode,
//   so this alone can miss a restart;
// - the ListAndWatch stream kubelet opened after the latest registration ended (a kubelet that
//   dies closes its connections): register again, at once. Streams opened before that
//   registration are an earlier kubelet's, or ones kubelet itself replaced when it took the
//   registration: their end means nothing, so re-registering never feeds itself.
// Until kubelet.sock exists (no kubelet on this machine, or not yet started) nothing is served
// and nothing is logged beyond one line.
//
// The sockets are gRPC's own on Linux; on Windows (plugin_sockets.h) the plugin listens on a fresh
// AF_UNIX name each time it serves and the socket bridge carries both legs: kubelet's connections
// to the plugin's gRPC server, which listens on no port (each connection is handed to it through
// a connection the bridge makes to itself, and every call is checked against the bridge's list),
// and the registration from a loopback port, which admits only this process, to kubelet.sock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "devices/device_source.h"
#include "shim/device_plugin/device_plugin_service.h"
#include "shim/device_plugin/plugin_resource.h"
#include "shim/device_plugin/plugin_sockets.h"
#include "shim/device_plugin/socket_file_channel.h"
#include "shim/socket_bridge/socket_file.h"

namespace grpc {
class Server;
}

namespace dxshim::device_plugin {

// The sockets of the two resources (kGrpcUnix), or their stems before "-<unix ms>.sock" (the
// bridged modes): neither stem followed by "-<digits>.sock" is the other's.
inline constexpr char kSlotsEndpoint[] = "dxshim.sock";
inline constexpr char kMemoryEndpoint[] = "dxshim-memory.sock";

struct DevicePluginOptions {
  std::string dir;            // kubelet's device-plugin directory
  std::string resource_name;  // e.g. dxshim.io/gpu
  // The socket's name (kGrpcUnix), or its stem before "-<unix ms>.sock" (the bridged modes).
  std::string endpoint = kSlotsEndpoint;
  PluginSockets sockets = DefaultPluginSockets();
  std::chrono::milliseconds watch_interval{1000};
};

class DevicePluginServer {
 public:
  DevicePluginServer(DevicePluginOptions options, const devices::DeviceSnapshot& snapshot,
                     std::unique_ptr<PluginResource> resource);
  ~DevicePluginServer();
  DevicePluginServer(const DevicePluginServer&) = delete;
  DevicePluginServer& operator=(const DevicePluginServer&) = delete;

  // Starts the watcher thread (serving and registering happen there).
  void Start();
  // Stops serving and removes the plugin's socket. Kubelet marks the resource's devices
  // unhealthy when the plugin's stream ends, until a registration comes again.
  void Stop();
  // What the runtime says about who holds which GPU (each resync of the runtime record); the
  // service works out from it the devices that pods the scheduler does not count hold.
  void SetRecord(RuntimeRecord record);

 private:
  struct Serving;
  using FileId = socket_bridge::FileIdentity;
  bool bridged() const { return options_.sockets != PluginSockets::kGrpcUnix; }

  void Watch();
  bool EnsureServing();  // false when the socket cannot be served (logged)
  bool ServeBridged(Serving& serving, std::string& error);
  void StopServing();
  void RemoveStaleSockets() const;
  void KeepServing();                        // serves anew when not serving or our socket vanished
  void RegisterOnce(const FileId& kubelet);  // one attempt, logged; `kubelet`: the file now
  bool Register(std::string& error);
  void OnWatchEnded(std::uint64_t number);  // a gRPC thread
  WatchEnded WatchEndedHook();              // for a new service: resets the numbers
  std::uint64_t WatchesOpened();
  std::string RegistrationTarget(std::string& error);

  const DevicePluginOptions options_;
  const devices::DeviceSnapshot& snapshot_;
  const std::unique_ptr<PluginResource> resource_;
  std::string endpoint_;     // the name served now (the watcher thread's)
  std::string socket_path_;  // <dir>/<endpoint_>
  const std::string kubelet_socket_;
  // The way to kubelet.sock (in the bridged modes a loopback port bridged to it), made at the
  // first registration, kept until Stop.
  std::unique_ptr<SocketFileChannel> registration_;

  std::mutex serving_mutex_;  // serving_ and record_: the watcher thread and SetRecord
  std::unique_ptr<Serving> serving_;
  RuntimeRecord record_;
  FileId served_;
  FileId registered_with_;  // kubelet.sock at the last successful registration
  bool registered_ = false;
  std::string last_error_;
  bool serve_failed_ = false;  // the last attempt to serve failed (logged once)

  std::mutex mutex_;  // stopping_ and the watch_ numbers
  std::condition_variable cv_;
  bool stopping_ = false;
  // ListAndWatch streams by their number (DevicePluginService::watches_opened), for the service
  // served now: the latest before the last registration (a later one is the registered
  // kubelet's, and its end means that kubelet is gone), the latest that ended, the latest the
  // watcher thread has seen end.
  std::uint64_t watch_mark_ = 0;
  std::uint64_t watch_ended_max_ = 0;
  std::uint64_t watch_ended_seen_ = 0;
  std::thread thread_;
};

}  // namespace dxshim::device_plugin
