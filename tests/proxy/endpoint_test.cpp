// The endpoints dxshim listens on and dials (shim/proxy/endpoint.h): the unix and TCP forms an
// operator writes, and what is refused, with the text and the problem named.
#include "shim/proxy/endpoint.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

TEST(Endpoint, UnixForms) {
  auto e = ParseEndpoint("unix:///run/dxshim/dxshim.sock");
  EXPECT_EQ(e.kind, Endpoint::Kind::kUnix);
  EXPECT_EQ(e.address, "/run/dxshim/dxshim.sock");
  EXPECT_EQ(e.GrpcTarget(), "unix:/run/dxshim/dxshim.sock");
  EXPECT_EQ(e.ToString(), "unix:///run/dxshim/dxshim.sock");
  auto bare = ParseEndpoint("/run/containerd/containerd.sock");
  EXPECT_EQ(bare.kind, Endpoint::Kind::kUnix);
  EXPECT_EQ(bare.address, "/run/containerd/containerd.sock");
}

TEST(Endpoint, TcpForms) {
  auto e = ParseEndpoint("tcp://127.0.0.1:9000");
  EXPECT_EQ(e.kind, Endpoint::Kind::kTcp);
  EXPECT_EQ(e.GrpcTarget(), "127.0.0.1:9000");
  EXPECT_EQ(ParseEndpoint("tcp://[::1]:0").address, "[::1]:0");
}

void ExpectRejected(const std::string& text, const std::string& why) {
  try {
    ParseEndpoint(text);
    ADD_FAILURE() << text << " was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + text + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
  }
}

TEST(Endpoint, RejectionsNameTheTextAndTheProblem) {
  ExpectRejected("", "empty");
  ExpectRejected("unix://relative.sock", "absolute");
  ExpectRejected("relative.sock", "expected unix:///path");
  ExpectRejected("tcp://localhost", "host:port");
  ExpectRejected("tcp://localhost:http", "port");
  ExpectRejected("tcp://localhost:70000", "port");
  ExpectRejected("npipe://./pipe/dxshim", "Windows");
  ExpectRejected("unix:///" + std::string(200, 'a'), "107");
}

}  // namespace
}  // namespace dxshim
