// The socket bridge that carries dxshim.exe's device plugin on Windows (gRPC 1.51 has no AF_UNIX
// there), run here on Linux over real AF_UNIX sockets: dxshim serve with
// DXSHIM_PLUGIN_SOCKETS=bridged-unix listens on a fresh `dxshim-<unix ms>.sock` and bridges it
// to the plugin's gRPC server (each connection handed to it: it listens on no port), and registers
// through a loopback port bridged to kubelet.sock, exactly as on Windows. The test kubelet
// (tests/support/test_kubelet.h; kubelet is the one part stood in for) registers it, watches,
// allocates and restarts; the GPU pod goes through a real containerd; a gRPC call's first bytes
// from `nobody` on every loopback port reach no gRPC parser; 100 concurrent connections and a peer
// that disconnects mid-message pass through. The GPUs are device nodes the test makes (test_gpu.h).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/loopback_impostor.h"
#include "tests/support/test_kubelet.h"

namespace dxshim::test {
namespace {

using std::chrono::seconds;
constexpr auto kWait = seconds(30);

class PluginBridge : public GpuNodeTest {
 protected:
  PluginBridge() : plugin_dir_(dir_ / "device-plugins") {
    std::filesystem::create_directories(plugin_dir_);
    ::setenv("DXSHIM_PLUGIN_SOCKETS", "bridged-unix", 1);  // dxshim's child inherits it
  }
  ~PluginBridge() override { ::unsetenv("DXSHIM_PLUGIN_SOCKETS"); }

  void Start(unsigned max_per_device) {
    StartDxshim(max_per_device, {"--device-plugin-dir", plugin_dir_, "--device-refresh", "200ms",
                                 "--resync-interval", "1s"});
  }

  v1beta1::RegisterRequest WaitForRegistration(std::size_t n) {
    const auto request = kubelet_->WaitForRegistration(n, kWait);
    EXPECT_TRUE(request.has_value()) << "registration " << n << " never came; log:\n" << Log();
    return request.value_or(v1beta1::RegisterRequest{});
  }

  std::vector<v1beta1::Device> WaitForList(std::size_t total, std::size_t healthy) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) {
          return d.size() == total && HealthyCount(d) == healthy;
        },
        kWait);
    EXPECT_TRUE(list.has_value()) << "kubelet never got " << total << " device(s), " << healthy
                                  << " healthy; log:\n"
                                  << Log();
    return list.value_or(std::vector<v1beta1::Device>{});
  }

  // The port in the last log line matching `pattern` (one capture group), 0 if none.
  int PortFromLog(const std::string& pattern) {
    int port = 0;
    WaitFor(
        [&] {
          const auto log = Log();
          const std::regex re(pattern);
          for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it) {
            port = std::stoi((*it)[1].str());
          }
          return port != 0;
        },
        kWait);
    return port;
  }

  const std::string plugin_dir_;
  std::unique_ptr<TestKubelet> kubelet_;
};

bool IsFreshSocketName(const std::string& name) {
  return std::regex_match(name, std::regex(R"(dxshim-[0-9]{13}\.sock)"));
}

TEST_F(PluginBridge, RegistersAFreshAfUnixSocketAndServesListAndWatchAllocateAndAGpuPod) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(2);
  const auto request = WaitForRegistration(1);
  EXPECT_EQ(request.resource_name(), "dxshim.io/gpu");
  EXPECT_TRUE(IsFreshSocketName(request.endpoint())) << request.endpoint();
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/" + request.endpoint()));
  const auto list = WaitForList(4, 4);

  grpc::ClientContext context;
  v1beta1::DevicePluginOptions options;
  ASSERT_TRUE(kubelet_->PluginStub()->GetDevicePluginOptions(&context, {}, &options).ok());

  // Kubelet's flow for a pod asking for one dxshim.io/gpu: Allocate through the bridge, then
  // CreateContainer through dxshim with what Allocate returned.
  std::map<std::string, std::string> annotations;
  const auto allocated = kubelet_->Allocate(1, &annotations);
  ASSERT_TRUE(allocated.ok()) << allocated.error_message() << "\n" << Log();
  ASSERT_EQ(annotations.count("dxshim.io/plugin-slots"), 1u);
  const auto pod = RunPod("bridged", false);
  auto config = SleepingBusybox("app");
  for (const auto& [k, v] : annotations) (*config.mutable_annotations())[k] = v;
  std::string id;
  const auto created = CreateAndStart(pod, config, &id);
  ASSERT_TRUE(created.ok()) << created.error_message() << "\n" << Log();
  EXPECT_FALSE(DevicesOf(id).empty()) << "the container got no GPU";

  // The inventory changes: the list follows through the bridge's long-lived stream.
  WriteInventory(1);
  WaitForList(4, 2);
}

TEST_F(PluginBridge, TheRegistrationPortAnswersOnlyThisProcess) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  WaitForRegistration(1);
  WaitForList(1, 1);
  // The plugin's gRPC server listens on no port: kubelet's connections are handed to it.
  EXPECT_NE(Log().find("each connection handed to its gRPC server"), std::string::npos) << Log();

  // The registration port is dxshim's own way to kubelet.sock: this test process is another
  // process, and its Register never reaches kubelet.
  const int registration = PortFromLog(R"(registration through 127\.0\.0\.1:([0-9]+))");
  ASSERT_NE(registration, 0) << Log();
  auto registrar = v1beta1::Registration::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(registration), grpc::InsecureChannelCredentials()));
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint("../../elsewhere.sock");
  request.set_resource_name("stranger.io/gpu");
  grpc::ClientContext context4;
  context4.set_deadline(std::chrono::system_clock::now() + seconds(3));
  v1beta1::Empty empty;
  EXPECT_FALSE(registrar->Register(&context4, request, &empty).ok());
  EXPECT_EQ(kubelet_->registrations(), 1u);
  // The child's log lines reach serve's log through a pipe: a moment after the refusal.
  const auto refusal = "refused a connection to the registration bridge: it comes from process " +
                       std::to_string(::getpid());
  EXPECT_TRUE(WaitFor([&] { return Log().find(refusal) != std::string::npos; }, kWait)) << Log();
}

// No unauthenticated local process reaches a gRPC parser of dxshim: the plugin's gRPC server
// listens on no port (kubelet's connections are handed to it, socket_pair.h), and every loopback
// port serve and its plugin child listen on takes a gRPC call's first bytes from `nobody` (the
// HTTP/2 preface, SETTINGS and HEADERS) only to close the connection unanswered, each refusal
// counted in the log. The impostor's check is shown to see a gRPC server when there is one.
TEST_F(PluginBridge, ImpostorBytesOnEveryLoopbackPortReachNoGrpcParser) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  WaitForRegistration(1);
  WaitForList(1, 1);
  EXPECT_EQ(Log().find("bridged to 127.0.0.1:"), std::string::npos) << Log();

  // The control: a gRPC server on loopback answers the same bytes with its SETTINGS frame.
  {
    v1beta1::Registration::Service unimplemented;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&unimplemented);
    auto control = builder.BuildAndStart();
    ASSERT_TRUE(control && port > 0);
    const auto parsed = SendHttp2AsNobody(static_cast<std::uint16_t>(port), dir_.path());
    EXPECT_TRUE(parsed.http2_settings) << parsed.output;
    control->Shutdown(std::chrono::system_clock::now());
  }

  const auto ports = ListeningTcpPorts(ProcessTree(dxshim_->process().pid()));
  // serve listens on no TCP port here (a unix CRI socket, no metrics); its plugin child on one
  // per resource (slots, memory units): its ways to kubelet.sock.
  std::vector<std::uint16_t> registrations;
  const std::regex registration(R"(registration through 127\.0\.0\.1:([0-9]+))");
  const auto started = Log();
  for (std::sregex_iterator it(started.begin(), started.end(), registration), end; it != end;
       ++it) {
    registrations.push_back(static_cast<std::uint16_t>(std::stoi((*it)[1].str())));
  }
  std::sort(registrations.begin(), registrations.end());
  ASSERT_EQ(registrations.size(), 2u) << started;
  EXPECT_EQ(ports, registrations) << started;
  const std::string refusal = "refused a connection to the registration bridge: it comes from";
  const auto refusals = [&] {
    const auto log = Log();
    std::size_t n = 0;
    for (auto at = log.find(refusal); at != std::string::npos; at = log.find(refusal, at + 1)) ++n;
    return n;
  };
  for (const auto port : ports) {
    const auto before = refusals();
    const auto answer = SendHttp2AsNobody(port, dir_.path());
    EXPECT_EQ(answer.received, 0u) << port << ": " << answer.output;
    EXPECT_FALSE(answer.http2_settings) << port << ": " << answer.output;
    EXPECT_NE(answer.ended, "timeout")
        << port << ": closed early, not left open: " << answer.output;
    if (std::find(registrations.begin(), registrations.end(), port) == registrations.end()) {
      continue;  // not a registration port (a failure above already): no refusal to count
    }
    EXPECT_TRUE(WaitFor([&] { return refusals() == before + 1; }, kWait))
        << port << ": one refusal counted; log:\n"
        << Log();
  }
  EXPECT_EQ(kubelet_->registrations(), 1u);
  // Kubelet's own path goes on.
  std::map<std::string, std::string> annotations;
  EXPECT_TRUE(kubelet_->Allocate(1, &annotations).ok()) << Log();
}

TEST_F(PluginBridge, AKubeletRestartMeansAFreshSocketAndANewRegistration) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  const auto first = WaitForRegistration(1);
  WaitForList(1, 1);
  kubelet_->Restart();  // removes the plugin's socket and serves a new kubelet.sock
  const auto second = WaitForRegistration(2);
  EXPECT_TRUE(IsFreshSocketName(second.endpoint())) << second.endpoint();
  EXPECT_NE(second.endpoint(), first.endpoint());
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/" + second.endpoint()));
  EXPECT_FALSE(std::filesystem::exists(plugin_dir_ + "/" + first.endpoint()));
  WaitForList(1, 1);
  std::map<std::string, std::string> annotations;
  EXPECT_TRUE(kubelet_->Allocate(1, &annotations).ok()) << Log();

  // dxshim stops (SIGTERM): serve stops its plugin, whose socket goes with it.
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
  EXPECT_FALSE(std::filesystem::exists(plugin_dir_ + "/" + second.endpoint())) << Log();
}

TEST_F(PluginBridge, EightBackToBackRestartsKeepingItsSocketAreEachAnsweredWithARegistration) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  const auto first = WaitForRegistration(1);
  for (std::size_t restart = 1; restart <= 8; ++restart) {
    kubelet_->Restart(TestKubelet::PluginSockets::kKept);
    ASSERT_TRUE(kubelet_->WaitForRegistrationSinceStart(kWait))
        << "restart " << restart << " was never registered with; log:\n"
        << Log();
    const auto again = WaitForRegistration(kubelet_->registrations());
    EXPECT_EQ(again.endpoint(), first.endpoint());  // its socket was kept: still served
  }
  WaitForList(1, 1);
  EXPECT_LE(kubelet_->registrations(), 18u) << Log();  // one more at most per restart
  PrintRestartSigns(Log(), *kubelet_);
}

TEST_F(PluginBridge, AHundredConcurrentConnectionsAllGetAnswers) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(2);
  const auto request = WaitForRegistration(1);
  const auto list = WaitForList(2, 2);
  const auto target = "unix://" + plugin_dir_ + "/" + request.endpoint();
  constexpr int kConnections = 100;
  // A channel each, with an argument of its own so that gRPC gives each its own connection;
  // all connected before any call, so that 100 bridged connections are open at once.
  std::vector<std::unique_ptr<v1beta1::DevicePlugin::Stub>> stubs;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < kConnections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("dxshim.test.connection", i);
    channels.push_back(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    stubs.push_back(v1beta1::DevicePlugin::NewStub(channels.back()));
  }
  for (auto& channel : channels) {
    ASSERT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() + kWait)) << Log();
  }
  std::atomic<int> answered{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kConnections; ++i) {
    callers.emplace_back([&, i] {
      v1beta1::AllocateRequest allocate;
      allocate.add_container_requests()->add_devices_ids(
          list[static_cast<std::size_t>(i) % 2].id());
      v1beta1::AllocateResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + kWait);
      if (stubs[static_cast<std::size_t>(i)]->Allocate(&context, allocate, &response).ok() &&
          response.container_responses_size() == 1) {
        ++answered;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(answered.load(), kConnections) << Log();
  EXPECT_EQ(Log().find("refused a call"), std::string::npos) << Log();
}

TEST_F(PluginBridge, APeerThatDisconnectsMidMessageCostsNothingElse) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(1);
  const auto request = WaitForRegistration(1);
  WaitForList(2, 2);
  const auto path = plugin_dir_ + "/" + request.endpoint();
  // Raw AF_UNIX clients that send part of an HTTP/2 message and go: half the connection
  // preface; the preface and half a frame header; a whole preface then a reset.
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const std::vector<std::string> partial = {preface.substr(0, 10), preface + "\x00\x00\x12\x04",
                                            preface};
  for (std::size_t i = 0; i < partial.size(); ++i) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::send(s, partial[i].data(), partial[i].size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(partial[i].size()));
    if (i == 2) {
      linger abort{1, 0};  // close with a reset, not an orderly end
      ::setsockopt(s, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    }
    ::close(s);
  }
  // The kubelet's own stream and calls go on through the bridge; nothing restarted.
  std::map<std::string, std::string> annotations;
  EXPECT_TRUE(kubelet_->Allocate(1, &annotations).ok()) << Log();
  WriteInventory(1);
  WaitForList(2, 1);
  EXPECT_EQ(kubelet_->registrations(), 1u);
  EXPECT_EQ(Log().find("its process exited"), std::string::npos) << Log();
}

}  // namespace
}  // namespace dxshim::test
