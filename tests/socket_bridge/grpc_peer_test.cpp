// gRPC peer strings (shim/socket_bridge/grpc_peer.h): a loopback peer gives its port, anything
// else (another address, a unix peer, a malformed string) gives none.
#include "shim/socket_bridge/grpc_peer.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

TEST(GrpcPeer, LoopbackPeersGiveTheirPort) {
  EXPECT_EQ(LoopbackPeerPort("ipv4:127.0.0.1:54321"), 54321);
  EXPECT_EQ(LoopbackPeerPort("ipv6:[::1]:443"), 443);
  EXPECT_EQ(LoopbackPeerPort("ipv6:%5B::1%5D:65535"), 65535);
}

TEST(GrpcPeer, AnythingElseIsNotALoopbackPeer) {
  for (const char* peer :
       {"ipv4:10.0.0.1:54321", "ipv6:[fe80::1]:1", "unix:/run/dxshim.sock", "unix:", "",
        "ipv4:127.0.0.1:", "ipv4:127.0.0.1:0", "ipv4:127.0.0.1:65536", "ipv4:127.0.0.1:12x",
        "ipv4:127.0.0.1:123456", "ipv4:127.0.0.1", "ipv6:[::1]", "tcp:127.0.0.1:5"}) {
    EXPECT_EQ(LoopbackPeerPort(peer), std::nullopt) << peer;
  }
}

}  // namespace
}  // namespace dxshim
