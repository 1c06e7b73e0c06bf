// Which socket file of kubelet's folder a plugin serves now: its fixed name with gRPC's unix
// sockets, the newest `<stem>-<unix ms>.sock` in the bridged modes (never another endpoint's, nor
// a name with something else between stem and ".sock"); and the fresh names themselves. The
// channel's forwarder is exercised through real sockets in device_plugin_bridge_e2e_test.
#include "shim/device_plugin/socket_file_channel.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace dxshim::device_plugin {
namespace {

TEST(IsFreshSocketName, IsTheStemADashAndDigits) {
  EXPECT_TRUE(IsFreshSocketName("dxshim-1764129000123.sock", "dxshim.sock"));
  EXPECT_TRUE(IsFreshSocketName("dxshim-memory-1764129000123.sock", "dxshim-memory.sock"));
  // The memory plugin's names are not the slots plugin's, and the reverse.
  EXPECT_FALSE(IsFreshSocketName("dxshim-memory-1764129000123.sock", "dxshim.sock"));
  EXPECT_FALSE(IsFreshSocketName("dxshim-1764129000123.sock", "dxshim-memory.sock"));
  EXPECT_FALSE(IsFreshSocketName("dxshim.sock", "dxshim.sock"));
  EXPECT_FALSE(IsFreshSocketName("dxshim-.sock", "dxshim.sock"));
  EXPECT_FALSE(IsFreshSocketName("dxshim-12a.sock", "dxshim.sock"));
  EXPECT_TRUE(IsFreshSocketName(FreshSocketName("dxshim.sock"), "dxshim.sock"));
}

TEST(ServedSocket, IsTheFixedNameOrTheNewestFreshOne) {
  test::TempDir dir;
  EXPECT_EQ(ServedSocket(dir.path(), "dxshim.sock", PluginSockets::kGrpcUnix), "");
  EXPECT_EQ(ServedSocket(dir.path(), "dxshim.sock", PluginSockets::kBridgedUnix), "");
  for (const char* name :
       {"dxshim.sock", "dxshim-999.sock", "dxshim-1764129000123.sock", "dxshim-1764129000099.sock",
        "dxshim-memory-1864129000123.sock", "kubelet.sock"}) {
    std::ofstream(dir / name) << "";
  }
  EXPECT_EQ(ServedSocket(dir.path(), "dxshim.sock", PluginSockets::kGrpcUnix), dir / "dxshim.sock");
  EXPECT_EQ(ServedSocket(dir.path(), "dxshim.sock", PluginSockets::kBridgedUnix),
            dir / "dxshim-1764129000123.sock");
  EXPECT_EQ(ServedSocket(dir.path(), "dxshim-memory.sock", PluginSockets::kBridgedTcpStandIn),
            dir / "dxshim-memory-1864129000123.sock");
}

}  // namespace
}  // namespace dxshim::device_plugin
