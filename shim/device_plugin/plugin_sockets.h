// How the device plugin's two sockets in kubelet's folder (its own, which kubelet dials, and
// kubelet.sock, where it registers) are made:
//   kGrpcUnix           gRPC's own unix sockets (Linux);
//   kBridgedUnix        AF_UNIX socket files bridged to the plugin's gRPC server and client on
//                       127.0.0.1 (Windows, where gRPC 1.51 has no AF_UNIX transport; also runs
//                       on Linux, where the bridge is tested over real AF_UNIX sockets);
//   kBridgedTcpStandIn  the same bridge with loopback-TCP stand-in files for the AF_UNIX ones
//                       (wine 8.0, whose Winsock has no AF_UNIX; kubelet cannot use them). Only
//                       under wine: its ports are open to every local process, and wine is
//                       where the owner check admits connections wine lists without an owner
//                       (shim/socket_bridge/own_connections.h). A real node refuses it.
// The bridged modes listen on a fresh name each time (`dxshim-<unix ms>.sock`), as the DirectX
// device plugins do on Windows. DXSHIM_PLUGIN_SOCKETS names the mode for tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "shim/socket_bridge/socket_file.h"

namespace dxshim::device_plugin {

enum class PluginSockets { kGrpcUnix, kBridgedUnix, kBridgedTcpStandIn };

inline constexpr char kPluginSocketsVariable[] = "DXSHIM_PLUGIN_SOCKETS";

// kBridgedUnix on Windows, kGrpcUnix elsewhere (plugin_sockets_windows.cpp, _posix.cpp).
PluginSockets DefaultPluginSockets();
// Why gRPC's own unix sockets cannot be used here: "gRPC has no unix sockets on Windows"; "" on
// POSIX (plugin_sockets_windows.cpp, _posix.cpp).
std::string GrpcUnixProblem();
// "grpc-unix", "bridged-unix", "tcp-stand-in"; nullopt for anything else.
std::optional<PluginSockets> ParsePluginSockets(std::string_view text);
const char* ToString(PluginSockets sockets);
// Why `sockets` cannot be used by this program ("" when it can): grpc-unix on Windows (gRPC 1.51
// has no AF_UNIX transport there), tcp-stand-in anywhere but under wine.
std::string PluginSocketsProblem(PluginSockets sockets);
// The address family of a bridged mode's socket files.
socket_bridge::SocketFamily FamilyOf(PluginSockets sockets);

// DXSHIM_PLUGIN_SOCKETS (tests), else the platform's way. Throws std::invalid_argument naming the
// variable when its value is unknown or cannot be used here.
PluginSockets ChosenPluginSockets();

}  // namespace dxshim::device_plugin
