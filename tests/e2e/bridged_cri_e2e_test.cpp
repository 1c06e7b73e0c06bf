// The portable part of the CRI leg that kubelet reaches on Windows, against a real containerd. On a
// Windows node kubelet dials dxshim's named pipe; the pipe acceptor (shim/windows, Win32 only)
// bridges each pipe connection to dxshim's CRI server on 127.0.0.1, lists its own connection
// there (socket_bridge::OwnConnections) and the server admits only calls over a listed one
// (socket_bridge::AdmitOnlyThrough, ProxyOptions::admit_peer). Here a socket bridge over an
// AF_UNIX file stands in for the pipe acceptor, the one Windows-only part, and lists its
// connections the same way; the relay (shim/proxy), the admission and containerd are the real
// ones:
//   CRI client --unix--> SocketForwarder --127.0.0.1--> ProxyServer --unix--> containerd
// Kubelet's path works, 100 connections at once included; a direct connection to the loopback
// port, and an impostor that binds 127.0.0.2 with the port of a live bridge connection, get
// PERMISSION_DENIED, reach nothing in containerd, and are named in a warning. The impostor is also
// the curl command deploy/windows/CHECKLIST.md has an operator run on a Windows node.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "shim/proxy/proxy_server.h"
#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_forwarder.h"
#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/loopback_impostor.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
namespace sb = socket_bridge;
using std::chrono::seconds;

class BridgedCri : public testing::Test {
 protected:
  void SetUp() override {
    ProxyOptions options;
    options.listen = ParseEndpoint("tcp://127.0.0.1:0");
    options.runtime = ParseEndpoint("unix://" + containerd_.socket());
    socket_path_ = dir_ / "cri.sock";
    std::string error;
    auto listener = sb::ListenUnix(socket_path_, error);
    ASSERT_TRUE(listener.valid()) << error;
    forwarder_ = std::make_unique<sb::SocketForwarder>(
        std::move(listener), "kubelet's socket", [this](std::string& dial_error) {
          if (server_port_ == 0) return sb::Socket();  // not listening yet: the client sees its end
          return sb::ConnectLoopback(server_port_, dial_error);
        });
    options.admit_peer = sb::AdmitOnlyThrough(forwarder_->backend_connections(), socket_path_,
                                              [this](const std::string& line) {
                                                std::lock_guard lock(mutex_);
                                                warnings_.push_back(line);
                                              });
    proxy_ = std::make_unique<ProxyServer>(std::move(options));
    proxy_->Start();
    server_port_ = static_cast<std::uint16_t>(proxy_->bound_port());
    kubelet_ = std::make_unique<CriClient>(socket_path_);
  }

  void TearDown() override {
    forwarder_->Stop();
    proxy_->Shutdown();
  }

  std::vector<std::string> Warnings() {
    std::lock_guard lock(mutex_);
    return warnings_;
  }

  std::uint16_t server_port() const { return server_port_; }

  std::size_t Pods() {
    v1::ListPodSandboxRequest request;
    v1::ListPodSandboxResponse response;
    EXPECT_TRUE(
        kubelet_->runtime->ListPodSandbox(Deadline(seconds(30)).get(), request, &response).ok());
    return static_cast<std::size_t>(response.items_size());
  }

  TempDir dir_;
  Containerd containerd_;
  std::string socket_path_;
  std::unique_ptr<sb::SocketForwarder> forwarder_;
  std::unique_ptr<ProxyServer> proxy_;
  std::atomic<std::uint16_t> server_port_{0};
  std::unique_ptr<CriClient> kubelet_;
  std::mutex mutex_;
  std::vector<std::string> warnings_;
};

TEST_F(BridgedCri, KubeletsPathWorksAHundredConnectionsAtOnce) {
  v1::VersionResponse version;
  ASSERT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
  EXPECT_EQ(version.runtime_name(), "containerd");
  // A channel each, with an argument of its own so that gRPC gives each its own connection; all
  // connected before any call, so that 100 bridged connections are listed at once.
  constexpr int kConnections = 100;
  std::vector<std::unique_ptr<CriClient>> clients;
  for (int i = 0; i < kConnections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("dxshim.test.connection", i);
    args.SetMaxReceiveMessageSize(-1);
    clients.push_back(std::make_unique<CriClient>(grpc::CreateCustomChannel(
        "unix://" + socket_path_, grpc::InsecureChannelCredentials(), args)));
    ASSERT_TRUE(
        clients.back()->channel->WaitForConnected(std::chrono::system_clock::now() + seconds(30)));
  }
  std::atomic<int> answered{0};
  std::vector<std::thread> callers;
  for (auto& client : clients) {
    callers.emplace_back([&, c = client.get()] {
      v1::VersionResponse v;
      v1::ListContainersResponse list;
      if (c->Version(&v, seconds(60)).ok() &&
          c->runtime->ListContainers(Deadline(seconds(60)).get(), {}, &list).ok()) {
        ++answered;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(answered.load(), kConnections);
  EXPECT_GE(LoopbackClientPorts(server_port()).size(), static_cast<std::size_t>(kConnections));
  EXPECT_TRUE(Warnings().empty()) << Warnings().front();
}

TEST_F(BridgedCri, ADirectConnectionAndAnImpostorOnTheBridgesPortAreRefused) {
  v1::VersionResponse version;
  ASSERT_TRUE(kubelet_->Version(&version, seconds(30)).ok());  // kubelet's connection stays open
  const auto bridged = LoopbackClientPorts(server_port());
  ASSERT_EQ(bridged.size(), 1u);
  const auto port = bridged.front();

  CriClient direct(DialTarget("127.0.0.1:" + std::to_string(server_port())));
  const auto refused = direct.Version(&version, seconds(30));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();

  for (const auto& [address, reuse] :
       std::vector<std::pair<std::string, bool>>{{"127.0.0.2", false}, {"127.0.0.9", true}}) {
    std::string error;
    const int fd = ConnectFrom(address, port, reuse, server_port(), error);
    ASSERT_GE(fd, 0) << error;
    CriClient impostor(ChannelOver(fd));
    const auto answer = impostor.Version(&version, seconds(30));
    EXPECT_EQ(answer.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << address << ": " << answer.error_message();
    // Nothing reaches containerd: a pod the impostor asks for is not made.
    v1::RunPodSandboxRequest run;
    *run.mutable_config() = HostNetworkPod("impostor", "uid-impostor", dir_ / "logs");
    v1::RunPodSandboxResponse pod;
    EXPECT_EQ(impostor.runtime->RunPodSandbox(Deadline(seconds(30)).get(), run, &pod).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    const auto warnings = Warnings();
    const auto named = "refused a call from ipv4:" + address + ":" + std::to_string(port) +
                       ": it did not come through " + socket_path_ +
                       " (no connection of the bridge has that address and port)";
    EXPECT_NE(std::find(warnings.begin(), warnings.end(), named), warnings.end())
        << named << "\n"
        << (warnings.empty() ? "" : warnings.back());
  }
  EXPECT_EQ(Pods(), 0u);
  // Kubelet's own path goes on.
  EXPECT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
}

// deploy/windows/CHECKLIST.md's impostor, spelled for Linux: curl speaking gRPC over HTTP/2 from
// 127.0.0.2 and the port of a bridge connection. It prints the call's trailers. The call has no
// message (HEADERS with END_STREAM): a refused call is answered without being read, and a curl
// still sending would see the stream reset under its upload instead of the answer.
TEST_F(BridgedCri, TheChecklistsCurlImpostorIsRefused) {
  v1::VersionResponse version;
  ASSERT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
  const auto bridged = LoopbackClientPorts(server_port());
  ASSERT_EQ(bridged.size(), 1u);
  const auto version_method = "/runtime.v1.RuntimeService/Version";
  const auto from_bridge =
      CurlGrpcImpostor(bridged.front(), server_port(), version_method, false, dir_.path());
  EXPECT_NE(from_bridge.find("grpc-status: 7"), std::string::npos) << from_bridge;
  const auto named = "refused a call from ipv4:127.0.0.2:" + std::to_string(bridged.front());
  const auto warnings = Warnings();
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.starts_with(named);
  })) << named;
  const auto any_port = CurlGrpcImpostor(0, server_port(), version_method, false, dir_.path());
  EXPECT_NE(any_port.find("grpc-status: 7"), std::string::npos) << any_port;
  EXPECT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
}

}  // namespace
}  // namespace dxshim::test
