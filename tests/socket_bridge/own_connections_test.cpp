// Who may use what only dxshim's bridges should reach (shim/socket_bridge/own_connections.h):
// a call is admitted only when its peer is the exact name gRPC gave a listed handed connection,
// while it is listed (the newest, when POSIX's "fd:N" comes again); the TCP table's owner check
// of the loopback ways out (run here on Linux's table) names this process for its own connection
// and another process for a forked child's, over real sockets.
#include "shim/socket_bridge/own_connections.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace dxshim::socket_bridge {
namespace {

TEST(OwnConnections, AdmitsExactlyAListedNameWhileItIsListed) {
  OwnConnections own;
  auto listed = own.Add("fd:17", {7, "kubelet.exe"});
  ASSERT_TRUE(listed);
  std::string refusal;
  BridgeClient client;
  EXPECT_TRUE(own.Admits("fd:17", refusal, &client)) << refusal;
  EXPECT_EQ(client.pid, 7u);
  EXPECT_EQ(client.program, "kubelet.exe");
  EXPECT_EQ(own.size(), 1u);
  for (const auto* other : {"fd:1", "fd:170", "ipv4:127.0.0.1:50000", "", "handed:17"}) {
    EXPECT_FALSE(own.Admits(other, refusal)) << other;
    EXPECT_EQ(refusal, "no connection the bridge handed to the server has that name");
  }
  listed.reset();
  EXPECT_FALSE(own.Admits("fd:17", refusal));
  EXPECT_EQ(own.size(), 0u);
}

TEST(OwnConnections, ANameGivenAgainMeansTheNewerConnection) {
  OwnConnections own;
  auto first = own.Add("fd:9", {1, "old.exe"});
  auto second = own.Add("fd:9", {2, "kubelet.exe"});
  std::string refusal;
  BridgeClient client;
  ASSERT_TRUE(own.Admits("fd:9", refusal, &client));
  EXPECT_EQ(client.program, "kubelet.exe");
  first.reset();  // the older bridge ends: the newer one stays listed
  ASSERT_TRUE(own.Admits("fd:9", refusal, &client));
  EXPECT_EQ(client.pid, 2u);
}

TEST(OwnConnections, AnEmptyNameListsNothing) {
  OwnConnections own;
  EXPECT_FALSE(own.Add(""));
  EXPECT_EQ(own.size(), 0u);
}

TEST(OwnConnections, TheOwnerCheckNamesThisProcessAndNotAnother) {
  std::uint16_t port = 0;
  std::string error;
  auto listener = ListenLoopback(port, error);
  ASSERT_TRUE(listener.valid()) << error;
  auto bridge = ConnectLoopback(port, error);
  ASSERT_TRUE(bridge.valid()) << error;
  Socket mine(::accept(listener.get(), nullptr, nullptr));
  std::string refusal;
  EXPECT_TRUE(PeerIsThisProcess(mine.get(), refusal)) << refusal;

  // A forked child's connection: the table names the child.
  const pid_t child = ::fork();
  if (child == 0) {
    std::string ignored;
    const auto theirs = ConnectLoopback(port, ignored);
    ::pause();
    ::_exit(0);
  }
  Socket theirs(::accept(listener.get(), nullptr, nullptr));
  EXPECT_FALSE(PeerIsThisProcess(theirs.get(), refusal));
  EXPECT_EQ(refusal, "it comes from process " + std::to_string(child) + ", not this one");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace dxshim::socket_bridge
