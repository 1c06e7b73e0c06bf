// The device plugin's socket modes on Windows: gRPC 1.51 has no AF_UNIX transport there, so the
// plugin's sockets are bridged (plugin_sockets.h).
#include "shim/device_plugin/plugin_sockets.h"

namespace dxshim::device_plugin {

PluginSockets DefaultPluginSockets() { return PluginSockets::kBridgedUnix; }

std::string GrpcUnixProblem() { return "gRPC has no unix sockets on Windows"; }

}  // namespace dxshim::device_plugin
