#include "shim/proxy/endpoint.h"

#include <gtest/gtest.h>

#include "shim/proxy/metadata.h"
#include "shim/proxy/pipe_name.h"
#include "shim/socket_bridge/grpc_peer.h"

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

TEST(Metadata, TransportHeadersAreNotCopied) {
  for (const char* key : {":authority", "content-type", "te", "user-agent", "grpc-timeout",
                          "grpc-encoding", "grpc-status", "host"}) {
    EXPECT_TRUE(IsTransportHeader(key)) << key;
  }
  for (const char* key : {"containerd-namespace", "x-request-id", "trace-bin", "authorization"}) {
    EXPECT_FALSE(IsTransportHeader(key)) << key;
  }
}

}  // namespace
}  // namespace dxshim

namespace dxshim {
namespace {

TEST(PipeName, BothSpellingsKubeletAccepts) {
  EXPECT_EQ(PipePathFromEndpoint("npipe://./pipe/containerd-containerd"),
            "\\\\.\\pipe\\containerd-containerd");
  EXPECT_EQ(PipePathFromEndpoint("npipe:////./pipe/dxshim"), "\\\\.\\pipe\\dxshim");
  EXPECT_EQ(PipeEndpointFromPath(PipePathFromEndpoint("npipe:////./pipe/dxshim")),
            "npipe://./pipe/dxshim");
}

TEST(PipeName, Rejections) {
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"npipe://server/pipe/x", "only local pipes"},
           {"npipe://./pipe/", "empty"},
           {"npipe://./pipe/a\\b", "separator"},
           {"npipe://./pipe/a/b", "separator"},
           {"npipe://./pipe/" + std::string(300, 'x'), "too long"},
           {"unix:///x", "expected npipe"}}) {
    try {
      PipePathFromEndpoint(text);
      ADD_FAILURE() << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dxshim

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
