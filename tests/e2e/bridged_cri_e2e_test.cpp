// The portable part of the CRI leg that kubelet reaches on Windows, against a real containerd. On a
// Windows node kubelet dials dxshim's named pipe; the pipe acceptor (shim/windows, Win32 only)
// makes a connection to itself for each pipe connection and hands its server end to dxshim's
// CRI server (socket_bridge::MakeSocketPair, HandToGrpcServer), which listens on no port; it
// lists the name gRPC gives that connection (socket_bridge::OwnConnections) and the server admits
// only calls over a listed one (socket_bridge::AdmitOnlyThrough, ProxyOptions::admit_peer). Here
// a socket bridge over an AF_UNIX file stands in for the pipe acceptor, the one Windows-only
// part, and hands its connections the same way; the relay (shim/proxy), the handoff, the
// admission and containerd are the real ones:
//   CRI client --unix--> SocketForwarder --socket pair--> ProxyServer --unix--> containerd
// Kubelet's path works, 100 connections at once included, and the server has no TCP port for a
// local process to reach: this process listens on none.
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "shim/proxy/proxy_server.h"
#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_forwarder.h"
#include "shim/socket_bridge/socket_pair.h"
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
    options.listen = ParseEndpoint("unix://" + (dir_ / "cri.sock"));
    options.handed_connections = true;
    options.runtime = ParseEndpoint("unix://" + containerd_.socket());
    socket_path_ = dir_ / "cri.sock";
    std::string error;
    auto listener = sb::ListenUnix(socket_path_, error);
    ASSERT_TRUE(listener.valid()) << error;
    forwarder_ = std::make_unique<sb::SocketForwarder>(
        std::move(listener), "kubelet's socket",
        [this](std::string& dial_error, std::string& served_as) {
          if (!serving_) return sb::Socket();  // not serving yet: the client sees its end
          auto pair = sb::MakeSocketPair(dial_error);
          if (!pair) return sb::Socket();
          served_as = proxy_->ServeConnection(std::move(pair->server_end), dial_error);
          return std::move(pair->bridge_end);
        });
    options.admit_peer = sb::AdmitOnlyThrough(forwarder_->backend_connections(), socket_path_,
                                              [this](const std::string& line) {
                                                std::lock_guard lock(mutex_);
                                                warnings_.push_back(line);
                                              });
    proxy_ = std::make_unique<ProxyServer>(std::move(options));
    proxy_->Start();
    serving_ = true;
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
  std::atomic<bool> serving_{false};
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
  EXPECT_GE(forwarder_->backend_connections().size(), static_cast<std::size_t>(kConnections));
  EXPECT_TRUE(Warnings().empty()) << Warnings().front();
}

// The CRI server takes only handed connections: it listens on no port (the proxy reports none,
// and no listening TCP socket belongs to this process, the only one the relay runs in), so no
// local process can send gRPC's parser a byte around the front. A call over a connection gRPC
// has but the bridge no longer lists is refused by name.
TEST_F(BridgedCri, TheServerListensOnNoPortAndAdmitsOnlyListedConnections) {
  v1::VersionResponse version;
  ASSERT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
  EXPECT_EQ(proxy_->bound_port(), 0);
  EXPECT_EQ(ListeningTcpPorts({::getpid()}), std::vector<std::uint16_t>{});

  // A connection handed to the server without being listed: what a stale name would be.
  std::string error;
  auto pair = sb::MakeSocketPair(error);
  ASSERT_TRUE(pair) << error;
  const auto unlisted = proxy_->ServeConnection(std::move(pair->server_end), error);
  ASSERT_FALSE(unlisted.empty()) << error;
  CriClient stranger(grpc::CreateInsecureChannelFromFd("unlisted", pair->bridge_end.release()));
  const auto refused = stranger.Version(&version, seconds(30));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  const auto named = "refused a call from " + unlisted + ": it did not come through " +
                     socket_path_ +
                     " (no connection the bridge handed to the server has that name)";
  const auto warnings = Warnings();
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), named), warnings.end())
      << named << "\n"
      << (warnings.empty() ? "" : warnings.back());
  EXPECT_EQ(Pods(), 0u);
  // Kubelet's own path goes on.
  EXPECT_TRUE(kubelet_->Version(&version, seconds(30)).ok());
}

}  // namespace
}  // namespace dxshim::test
