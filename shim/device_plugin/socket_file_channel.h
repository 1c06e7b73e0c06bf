// How a program reaches a gRPC server behind a socket file in kubelet's device plugin folder
// (kubelet.sock, or a plugin's own socket), in each of the plugin socket modes (plugin_sockets.h):
// gRPC's own unix transport, or, where gRPC has none (Windows), a loopback port this process
// alone may use, forwarded to the socket file. The device plugin registers through it, and
// `dxshim doctor` asks the plugin what it advertises through it. Also: which socket file of the
// folder a plugin serves now (the bridged modes give it a fresh name each time).
#pragma once

#include <memory>
#include <string>

#include "shim/device_plugin/plugin_sockets.h"
#include "shim/socket_bridge/socket_forwarder.h"

namespace dxshim::device_plugin {

class SocketFileChannel {
 public:
  // `what` says in log lines what the connection is for ("registration": "device plugin:
  // registration through 127.0.0.1:PORT, ...", "refused a connection to the registration bridge").
  SocketFileChannel(std::string path, PluginSockets sockets, std::string what);
  ~SocketFileChannel();
  SocketFileChannel(const SocketFileChannel&) = delete;
  SocketFileChannel& operator=(const SocketFileChannel&) = delete;

  // gRPC's target for the socket file ("unix://...", or the forwarder's "ipv4:127.0.0.1:PORT",
  // made at the first call); empty with `error` set when no loopback port can be listened on.
  std::string Target(std::string& error);
  void Stop();  // ends the forwarder, if any
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const PluginSockets sockets_;
  const std::string what_;
  std::unique_ptr<socket_bridge::SocketForwarder> forwarder_;
  std::string target_;
};

// The bridged modes' names: `<stem>-<unix ms>.sock` for an endpoint `<stem>.sock`.
std::string SocketStem(const std::string& endpoint);
std::string FreshSocketName(const std::string& endpoint);
bool IsFreshSocketName(const std::string& name, const std::string& endpoint);

// The path of the socket file a plugin of `endpoint` serves in `dir` now: `dir/endpoint`
// (kGrpcUnix), or the newest fresh name (the bridged modes); empty when there is none.
std::string ServedSocket(const std::string& dir, const std::string& endpoint,
                         PluginSockets sockets);

}  // namespace dxshim::device_plugin
