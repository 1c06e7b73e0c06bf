// How the device plugin's sockets are made (shim/device_plugin/plugin_sockets.h): the names
// DXSHIM_PLUGIN_SOCKETS takes, and the loopback-TCP stand-in refused wherever it is not wine
// (here, Linux: its ports would be open to every local process), with the reason.
#include "shim/device_plugin/plugin_sockets.h"

#include <gtest/gtest.h>

namespace dxshim::device_plugin {
namespace {

TEST(PluginSockets, NamesParseBothWays) {
  for (const auto sockets :
       {PluginSockets::kGrpcUnix, PluginSockets::kBridgedUnix, PluginSockets::kBridgedTcpStandIn}) {
    EXPECT_EQ(ParsePluginSockets(ToString(sockets)), sockets);
  }
  EXPECT_EQ(ParsePluginSockets("tcp"), std::nullopt);
  EXPECT_EQ(ParsePluginSockets(""), std::nullopt);
}

TEST(PluginSockets, TheTcpStandInIsForWineAlone) {
  ASSERT_FALSE(socket_bridge::RunningUnderWine());
  const auto problem = PluginSocketsProblem(PluginSockets::kBridgedTcpStandIn);
  EXPECT_NE(problem.find("for wine alone"), std::string::npos) << problem;
  EXPECT_NE(problem.find("any local process"), std::string::npos) << problem;
  EXPECT_EQ(PluginSocketsProblem(PluginSockets::kBridgedUnix), "");
  EXPECT_EQ(PluginSocketsProblem(PluginSockets::kGrpcUnix), "");
}

}  // namespace
}  // namespace dxshim::device_plugin
