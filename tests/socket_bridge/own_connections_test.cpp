// Who may use a loopback port that only dxshim's bridges should reach
// (shim/socket_bridge/own_connections.h), over real sockets: a call is admitted only when its peer
// is exactly, address and port, the local end of a listed connection while it is listed; another
// loopback address with the same port (127.0.0.2, which any process may bind), another port, a
// connection no longer listed and a socket that is not TCP are not; IPv6 follows the same rule;
// the TCP table's owner check (Windows' rule, run here on Linux's table) names this process for
// its own connection and another process for a forked child's.
#include "shim/socket_bridge/own_connections.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "tests/support/loopback_impostor.h"

namespace dxshim::socket_bridge {
namespace {

std::string GrpcPeer(const TcpEndpoint& e) { return (e.v6 ? "ipv6:" : "ipv4:") + e.ToString(); }

class OwnConnectionsTest : public testing::Test {
 protected:
  OwnConnectionsTest() {
    std::string error;
    listener_ = ListenLoopback(port_, error);
    EXPECT_TRUE(listener_.valid()) << error;
  }

  // The server's side of the connection the listener has waiting.
  Socket Accepted() { return Socket(::accept(listener_.get(), nullptr, nullptr)); }

  std::uint16_t port_ = 0;
  Socket listener_;
};

TEST_F(OwnConnectionsTest, AdmitsExactlyTheListedEndpointWhileItIsListed) {
  OwnConnections own;
  std::string error;
  auto bridge = ConnectLoopback(port_, error);
  ASSERT_TRUE(bridge.valid()) << error;
  auto listed = own.Add(bridge.get());
  ASSERT_TRUE(listed);
  const auto end = LocalEndpoint(bridge.get()).value();
  std::string refusal;
  EXPECT_TRUE(own.Admits(GrpcPeer(end), refusal)) << refusal;
  EXPECT_EQ(own.size(), 1u);

  auto other_address = end;
  other_address.address[3] = 2;  // 127.0.0.2, same port
  EXPECT_FALSE(own.Admits(GrpcPeer(other_address), refusal));
  EXPECT_EQ(refusal, "no connection of the bridge has that address and port");
  auto other_port = end;
  other_port.port = static_cast<std::uint16_t>(end.port == 65535 ? 1 : end.port + 1);
  EXPECT_FALSE(own.Admits(GrpcPeer(other_port), refusal));
  EXPECT_FALSE(own.Admits("unix:/run/x.sock", refusal));
  EXPECT_EQ(refusal, "it is not a TCP peer");

  listed.reset();
  EXPECT_FALSE(own.Admits(GrpcPeer(end), refusal));
  EXPECT_EQ(own.size(), 0u);
}

TEST_F(OwnConnectionsTest, AnImpostorOnTheBridgesPortFromAnotherLoopbackAddressIsNotListed) {
  OwnConnections own;
  std::string error;
  auto bridge = ConnectLoopback(port_, error);
  ASSERT_TRUE(bridge.valid()) << error;
  const auto listed = own.Add(bridge.get());
  const auto end = LocalEndpoint(bridge.get()).value();
  auto bridged = Accepted();

  // What the server sees of a process that bound 127.0.0.2 with the bridge's port.
  Socket impostor(dxshim::test::ConnectFrom("127.0.0.2", end.port, false, port_, error));
  ASSERT_TRUE(impostor.valid()) << error;
  auto taken = Accepted();
  const auto seen = RemoteEndpoint(taken.get()).value();
  EXPECT_EQ(seen.ToString(), "127.0.0.2:" + std::to_string(end.port));
  std::string refusal;
  EXPECT_FALSE(own.Admits(GrpcPeer(seen), refusal));
  EXPECT_TRUE(own.Admits(GrpcPeer(RemoteEndpoint(bridged.get()).value()), refusal)) << refusal;

  // The bridge's own address and port cannot be had while the bridge holds them, even with
  // SO_REUSEADDR: the kernel refuses the bind.
  Socket reuse(dxshim::test::ConnectFrom("127.0.0.1", end.port, true, port_, error));
  EXPECT_FALSE(reuse.valid());
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
}

TEST_F(OwnConnectionsTest, OnlyTcpSocketsAreListed) {
  OwnConnections own;
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  Socket a(pair[0]);
  Socket b(pair[1]);
  EXPECT_FALSE(own.Add(a.get()));
  EXPECT_EQ(own.size(), 0u);
}

TEST(OwnConnectionsV6, IPv6LoopbackFollowsTheSameRule) {
  std::uint16_t port = 0;
  std::string error;
  const auto listener = ListenTcp("::1", 0, port, error);
  if (!listener.valid()) GTEST_SKIP() << "no IPv6 loopback here: " << error;
  Socket bridge(::socket(AF_INET6, SOCK_STREAM, 0));
  sockaddr_in6 server{};
  server.sin6_family = AF_INET6;
  server.sin6_addr = in6addr_loopback;
  server.sin6_port = htons(port);
  ASSERT_EQ(::connect(bridge.get(), reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  OwnConnections own;
  const auto listed = own.Add(bridge.get());
  const auto end = LocalEndpoint(bridge.get()).value();
  ASSERT_TRUE(end.v6 && end.loopback()) << end.ToString();
  const auto port_text = std::to_string(end.port);
  std::string refusal;
  EXPECT_TRUE(own.Admits("ipv6:[::1]:" + port_text, refusal)) << refusal;
  EXPECT_TRUE(own.Admits("ipv6:%5B::1%5D:" + port_text, refusal)) << refusal;
  EXPECT_FALSE(own.Admits("ipv4:127.0.0.1:" + port_text, refusal));
  EXPECT_FALSE(
      own.Admits("ipv6:[::1]:" + std::to_string(end.port == 1 ? 2 : end.port - 1), refusal));
}

TEST_F(OwnConnectionsTest, TheOwnerCheckNamesThisProcessAndNotAnother) {
  OwnConnections own(OwnConnections::OwnerCheck::kThisProcess);
  std::string error;
  auto bridge = ConnectLoopback(port_, error);
  ASSERT_TRUE(bridge.valid()) << error;
  const auto listed = own.Add(bridge.get());
  std::string refusal;
  EXPECT_TRUE(own.Admits(GrpcPeer(LocalEndpoint(bridge.get()).value()), refusal)) << refusal;
  auto mine = Accepted();
  EXPECT_TRUE(PeerIsThisProcess(mine.get(), refusal)) << refusal;

  // A forked child's connection: the table names the child.
  const pid_t child = ::fork();
  if (child == 0) {
    std::string ignored;
    const auto theirs = ConnectLoopback(port_, ignored);
    ::pause();
    ::_exit(0);
  }
  auto theirs = Accepted();
  EXPECT_FALSE(PeerIsThisProcess(theirs.get(), refusal));
  EXPECT_EQ(refusal, "it comes from process " + std::to_string(child) + ", not this one");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace dxshim::socket_bridge
