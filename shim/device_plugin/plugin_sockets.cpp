// The device plugin's socket modes: their names, which this program may use and which one it
// chose (the platform's default is plugin_sockets_windows.cpp's or plugin_sockets_posix.cpp's).
#include "shim/device_plugin/plugin_sockets.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dxshim::device_plugin {

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

std::string PluginSocketsProblem(PluginSockets sockets) {
  if (sockets == PluginSockets::kGrpcUnix) {
    if (auto problem = GrpcUnixProblem(); !problem.empty()) return problem;
  }
  if (sockets == PluginSockets::kBridgedTcpStandIn && !socket_bridge::RunningUnderWine()) {
    return "the loopback-TCP stand-in for AF_UNIX is for wine alone (wine 8.0 has no AF_UNIX), "
           "and this is not wine: its ports would let any local process reach the plugin";
  }
  return {};
}

socket_bridge::SocketFamily FamilyOf(PluginSockets sockets) {
  return sockets == PluginSockets::kBridgedTcpStandIn ? socket_bridge::SocketFamily::kTcpStandIn
                                                      : socket_bridge::SocketFamily::kUnix;
}

// DXSHIM_PLUGIN_SOCKETS (tests), else the platform's way. Throws std::invalid_argument.
PluginSockets ChosenPluginSockets() {
  const char* named = std::getenv(kPluginSocketsVariable);
  if (!named || !*named) return DefaultPluginSockets();
  const auto sockets = ParsePluginSockets(named);
  if (!sockets) {
    throw std::invalid_argument(std::string(kPluginSocketsVariable) + "='" + named +
                                "': expected grpc-unix, bridged-unix or tcp-stand-in");
  }
  if (auto problem = PluginSocketsProblem(*sockets); !problem.empty()) {
    throw std::invalid_argument(std::string(kPluginSocketsVariable) + "=" + named + ": " + problem);
  }
  return *sockets;
}

}  // namespace dxshim::device_plugin
