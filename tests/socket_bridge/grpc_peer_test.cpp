// gRPC peer strings and the endpoints they name (shim/socket_bridge/grpc_peer.h, tcp_endpoint.h):
// every loopback address keeps its whole address, not only its port (127.0.0.2 is not
// 127.0.0.1); IPv6 in both of gRPC's spellings; an IPv4-mapped address is the IPv4 one; anything
// else (a unix peer, a zone, a bad port, text gRPC did not write) names no endpoint.
#include "shim/socket_bridge/grpc_peer.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

using socket_bridge::MakeEndpoint;

TEST(GrpcPeer, APeerIsItsWholeAddressAndPort) {
  EXPECT_EQ(ParseGrpcPeer("ipv4:127.0.0.1:54321"), MakeEndpoint("127.0.0.1", 54321));
  EXPECT_EQ(ParseGrpcPeer("ipv4:127.0.0.2:54321"), MakeEndpoint("127.0.0.2", 54321));
  EXPECT_NE(ParseGrpcPeer("ipv4:127.0.0.2:54321"), ParseGrpcPeer("ipv4:127.0.0.1:54321"));
  EXPECT_EQ(ParseGrpcPeer("ipv4:10.0.0.1:5"), MakeEndpoint("10.0.0.1", 5));
  EXPECT_EQ(ParseGrpcPeer("ipv6:[::1]:443"), MakeEndpoint("::1", 443));
  EXPECT_EQ(ParseGrpcPeer("ipv6:%5B::1%5D:65535"), MakeEndpoint("::1", 65535));
  EXPECT_EQ(ParseGrpcPeer("ipv6:[fe80::1]:1"), MakeEndpoint("fe80::1", 1));
  // A dual-stack socket's view of an IPv4 peer is that IPv4 peer.
  EXPECT_EQ(ParseGrpcPeer("ipv6:[::ffff:127.0.0.2]:80"), MakeEndpoint("127.0.0.2", 80));
  EXPECT_NE(ParseGrpcPeer("ipv6:[::1]:443"), ParseGrpcPeer("ipv4:127.0.0.1:443"));
}

TEST(GrpcPeer, AnythingElseNamesNoEndpoint) {
  for (const char* peer : {"unix:/run/dxshim.sock",
                           "unix:",
                           "",
                           "ipv4:127.0.0.1:",
                           "ipv4:127.0.0.1:0",
                           "ipv4:127.0.0.1:65536",
                           "ipv4:127.0.0.1:12x",
                           "ipv4:127.0.0.1:123456",
                           "ipv4:127.0.0.1",
                           "ipv4:127.0.0.1:+5",
                           "ipv4:127.0.0.1:-5",
                           "ipv4:127.1:5",
                           "ipv4:localhost:5",
                           "ipv4:::1:5",
                           "ipv6:[::1]",
                           "ipv6:::1:5",
                           "ipv6:[::1:5",
                           "ipv6:[fe80::1%25eth0]:5",
                           "ipv6:[]:5",
                           "tcp:127.0.0.1:5"}) {
    EXPECT_EQ(ParseGrpcPeer(peer), std::nullopt) << peer;
  }
}

TEST(TcpEndpoint, SaysWhereItIsAndWhetherThatIsLoopback) {
  EXPECT_EQ(MakeEndpoint("127.0.0.2", 7)->ToString(), "127.0.0.2:7");
  EXPECT_EQ(MakeEndpoint("::1", 7)->ToString(), "[::1]:7");
  EXPECT_TRUE(MakeEndpoint("127.255.0.9", 1)->loopback());
  EXPECT_TRUE(MakeEndpoint("::1", 1)->loopback());
  EXPECT_TRUE(MakeEndpoint("::ffff:127.0.0.1", 1)->loopback());
  EXPECT_FALSE(MakeEndpoint("128.0.0.1", 1)->loopback());
  EXPECT_FALSE(MakeEndpoint("::2", 1)->loopback());
}

}  // namespace
}  // namespace dxshim
