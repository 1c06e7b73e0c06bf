// Which endpoint is which: every spelling of one socket or pipe compared equal, and the process
// serving a real unix socket read from the system (SO_PEERCRED and /proc: this test's own
// process), none for a socket nobody serves or a TCP endpoint.
#include "shim/doctor/endpoint_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "shim/socket_bridge/socket_api.h"
#include "tests/support/temp_dir.h"

namespace dxshim::doctor {
namespace {

TEST(SameEndpoint, ComparesEachSpellingOfOneSocketOrPipe) {
  EXPECT_TRUE(SameEndpoint("unix:///run/dxshim/dxshim.sock", "/run/dxshim/dxshim.sock"));
  EXPECT_TRUE(SameEndpoint("unix:///run/dxshim/dxshim.sock", "unix:/run//dxshim/dxshim.sock"));
  EXPECT_TRUE(SameEndpoint("npipe://./pipe/dxshim", "npipe:////./pipe/DXSHIM"));
  EXPECT_TRUE(SameEndpoint("npipe://./pipe/dxshim", "\\\\.\\pipe\\dxshim"));
  EXPECT_FALSE(SameEndpoint("npipe://./pipe/dxshim", "npipe://./pipe/containerd-containerd"));
  EXPECT_FALSE(
      SameEndpoint("unix:///run/dxshim/dxshim.sock", "unix:///run/containerd/containerd.sock"));
}

TEST(EndpointServer, IsTheProcessThatListensOnTheSocket) {
  test::TempDir dir;
  const auto path = dir / "server.sock";
  std::string error;
  const auto listener = socket_bridge::ListenUnix(path, error);
  ASSERT_TRUE(listener.valid()) << error;
  using State = EndpointServing::State;
  const auto serving = EndpointServer("unix://" + path);
  ASSERT_EQ(serving.state, State::kProcess);
  EXPECT_EQ(serving.process.pid, static_cast<std::uint32_t>(getpid()));
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  EXPECT_EQ(serving.process.program, comm);
  EXPECT_EQ(Describe(serving.process), comm + " (pid " + std::to_string(getpid()) + ")");

  // No such socket, and a socket file nobody listens on any more (a crashed server's).
  EXPECT_EQ(EndpointServer("unix://" + dir / "nobody.sock").state, State::kNobody);
  {
    const auto dead = socket_bridge::ListenUnix(dir / "dead.sock", error);
    ASSERT_TRUE(dead.valid()) << error;
  }
  EXPECT_EQ(EndpointServer("unix://" + dir / "dead.sock").state, State::kNobody);
  EXPECT_EQ(EndpointServer("tcp://127.0.0.1:1").state, State::kUnknown);
}

TEST(IsDxshim, KnowsItsNamesOnBothPlatforms) {
  EXPECT_TRUE(IsDxshim("dxshim"));
  EXPECT_TRUE(IsDxshim("DXSHIM.EXE"));
  EXPECT_FALSE(IsDxshim("containerd"));
  EXPECT_FALSE(IsDxshim("dxshim-impostor"));
}

}  // namespace
}  // namespace dxshim::doctor
