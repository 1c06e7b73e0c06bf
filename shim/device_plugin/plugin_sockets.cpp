#include "shim/device_plugin/plugin_sockets.h"

namespace dxshim::device_plugin {

PluginSockets DefaultPluginSockets() {
#ifdef _WIN32
  return PluginSockets::kBridgedUnix;
#else
  return PluginSockets::kGrpcUnix;
#endif
}

std::optional<PluginSockets> ParsePluginSockets(std::string_view text) {
  if (text == "grpc-unix") return PluginSockets::kGrpcUnix;
  if (text == "bridged-unix") return PluginSockets::kBridgedUnix;
  if (text == "tcp-stand-in") return PluginSockets::kBridgedTcpStandIn;
  return std::nullopt;
}

const char* ToString(PluginSockets sockets) {
  switch (sockets) {
    case PluginSockets::kGrpcUnix:
      return "grpc-unix";
    case PluginSockets::kBridgedUnix:
      return "bridged-unix";
    case PluginSockets::kBridgedTcpStandIn:
      return "tcp-stand-in";
  }
  return "?";
}

socket_bridge::SocketFamily FamilyOf(PluginSockets sockets) {
  return sockets == PluginSockets::kBridgedTcpStandIn ? socket_bridge::SocketFamily::kTcpStandIn
                                                      : socket_bridge::SocketFamily::kUnix;
}

}  // namespace dxshim::device_plugin
