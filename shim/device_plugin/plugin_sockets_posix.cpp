// The device plugin's socket modes on POSIX: gRPC's own unix sockets, and every mode allowed
// (plugin_sockets.h).
#include "shim/device_plugin/plugin_sockets.h"

namespace dxshim::device_plugin {

PluginSockets DefaultPluginSockets() { return PluginSockets::kGrpcUnix; }

std::string GrpcUnixProblem() { return {}; }

}  // namespace dxshim::device_plugin
