// The real Windows dxshim.exe (cross-built: scripts/build-windows.sh) end to end, under wine:
//   the project's CRI client (Linux) --TCP--> pipe-relay.exe --\\.\pipe\dxshim-<pid>--> dxshim.exe
//   --tcp://--> the test's real containerd (its CRI also on a loopback TCP port, since gRPC 1.51
//   has no unix sockets on Windows)
// dxshim.exe runs with the linux target on an inventory of test GPUs (a device node made by the
// test and a runtime file): wine has no GPU, so the inventory stands in for DXCore discovery.
// What only a Windows node shows (pipe ACLs, a real GPU, containerd on Windows) is in
// docs/windows.md and deploy/windows/CHECKLIST.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "dxshim/v1/node_status.grpc.pb.h"
#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/http_get.h"
#include "tests/support/loopback_impostor.h"
#include "tests/support/test_gpu.h"
#include "tests/support/wine_dxshim.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

class WindowsExeEndToEnd : public testing::Test {
 protected:
  // One containerd and one dxshim.exe for the whole suite: starting wine costs seconds.
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    std::filesystem::create_directories(*dir_ / "store");
    std::ofstream(*dir_ / "store/libdxgpu.so") << "from dxshim.exe\n";
    device_ = new DeviceNode("wine-e2e", 0);
    WriteTestGpuInventory(*dir_ / "inventory.yaml", {device_}, "e4", *dir_ / "store");
    containerd_ = new Containerd(Containerd::Listen::kUnixAndTcp);
    dxshim_ = new WineDxshim(
        DXSHIM_WINDOWS_EXE, DXSHIM_PIPE_RELAY_EXE, "tcp://" + containerd_->tcp_address(),
        {"--device-source", "inventory:" + *dir_ / "inventory.yaml", "--target", "linux",
         "--linux-system32-path", "/usr/lib/dxshim", "--max-containers-per-device", "1",
         "--resync-interval", "2s", "--log-level", "debug", "--metrics-listen", "127.0.0.1:0"});
  }

  static void TearDownTestSuite() {
    if (dxshim_ != nullptr && dxshim_->running()) {
      std::printf("dxshim.exe resident set after the end-to-end run: %.1f MiB\n",
                  static_cast<double>(dxshim_->RssKiB()) / 1024.0);
      const auto code = dxshim_->Stop();
      EXPECT_EQ(code, 0) << dxshim_->Log();
      EXPECT_NE(dxshim_->Log().find("stopping: Ctrl-C"), std::string::npos) << dxshim_->Log();
    }
    delete dxshim_;
    delete containerd_;
    delete device_;
    delete dir_;
  }

  void SetUp() override {
    ASSERT_TRUE(dxshim_->running()) << dxshim_->Log();
    client_ = std::make_unique<CriClient>(DialTarget(dxshim_->pipe_target()));
  }

  // RunPodSandbox through dxshim.exe, with the dxshim.io/gpu annotation if `gpu`.
  v1::PodSandboxConfig RunPod(const std::string& name, bool gpu, std::string* id) {
    v1::RunPodSandboxRequest run;
    *run.mutable_config() = HostNetworkPod(name, "uid-" + name, *dir_ / "logs");
    if (gpu) (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
    v1::RunPodSandboxResponse pod;
    const auto s = client_->runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod);
    EXPECT_TRUE(s.ok()) << s.error_message();
    *id = pod.pod_sandbox_id();
    return run.config();
  }

  grpc::Status CreateAndStart(const std::string& pod, const v1::PodSandboxConfig& config,
                              std::string* id) {
    return client_->CreateAndStart(pod, config, SleepingBusybox("app"), id);
  }

  v1::ExecSyncResponse Exec(const std::string& id, const std::string& script) {
    v1::ExecSyncResponse out;
    const auto s = client_->Exec(id, script, &out);
    EXPECT_TRUE(s.ok()) << s.error_message() << "\n" << dxshim_->Log();
    return out;
  }

  static TempDir* dir_;
  static DeviceNode* device_;
  static Containerd* containerd_;
  static WineDxshim* dxshim_;
  std::unique_ptr<CriClient> client_;
};

TempDir* WindowsExeEndToEnd::dir_ = nullptr;
DeviceNode* WindowsExeEndToEnd::device_ = nullptr;
Containerd* WindowsExeEndToEnd::containerd_ = nullptr;
WineDxshim* WindowsExeEndToEnd::dxshim_ = nullptr;

TEST_F(WindowsExeEndToEnd, AGpuPodGetsItsGpuAPlainPodPassesAndASecondGpuPodIsRefused) {
  v1::VersionResponse version;
  ASSERT_TRUE(client_->Version(&version, seconds(30)).ok()) << dxshim_->Log();
  EXPECT_EQ(version.runtime_name(), "containerd");

  std::string gpu_pod, gpu_container;
  const auto gpu_config = RunPod("wine-gpu", true, &gpu_pod);
  auto s = CreateAndStart(gpu_pod, gpu_config, &gpu_container);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << dxshim_->Log();
  EXPECT_EQ(Exec(gpu_container,
                 "cat /usr/lib/dxshim/libdxgpu.so; test -c " + device_->path() + " && echo device")
                .stdout_data(),
            "from dxshim.exe\ndevice\n");

  std::string plain_pod, plain_container;
  const auto plain_config = RunPod("wine-plain", false, &plain_pod);
  s = CreateAndStart(plain_pod, plain_config, &plain_container);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(Exec(plain_container, "ls /usr/lib/dxshim " + device_->path() + " 2>&1 | wc -l; echo")
                .stdout_data(),
            "2\n\n");  // two "No such file" lines: nothing was added
  v1::ContainerStatusRequest status_request;
  status_request.set_container_id(plain_container);
  v1::ContainerStatusResponse status;
  ASSERT_TRUE(
      client_->runtime->ContainerStatus(Deadline(seconds(30)).get(), status_request, &status).ok());
  EXPECT_EQ(status.status().mounts_size(), 0);

  // The only GPU holds one pod: a second GPU pod is refused, with the reason.
  std::string second_pod, second_container;
  const auto second_config = RunPod("wine-gpu-2", true, &second_pod);
  s = CreateAndStart(second_pod, second_config, &second_container);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();

  for (const auto& pod : {gpu_pod, plain_pod, second_pod}) client_->RemovePod(pod);
}

TEST_F(WindowsExeEndToEnd, LargeMessagesPassBothWays) {
  std::string pod, container;
  const auto config = RunPod("wine-large", false, &pod);
  ASSERT_TRUE(CreateAndStart(pod, config, &container).ok());
  // 6 MiB from the runtime (an exec's output) ...
  const auto big = Exec(container, "head -c 6291456 /dev/zero | tr '\\0' x").stdout_data();
  EXPECT_EQ(big.size(), 6u << 20);  // sizes and a count, not 6 MiB in a failure message
  EXPECT_EQ(std::count(big.begin(), big.end(), 'x'), 6 << 20);
  // ... and 6 MiB to it (a label selector nothing matches).
  v1::ListContainersRequest list;
  (*list.mutable_filter()->mutable_label_selector())["big"] = std::string(6u << 20, 'y');
  v1::ListContainersResponse listed;
  const auto s = client_->runtime->ListContainers(Deadline(seconds(60)).get(), list, &listed);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(listed.containers_size(), 0);
  client_->RemovePod(pod);
}

TEST_F(WindowsExeEndToEnd, TwoHundredConcurrentCallsAllSucceed) {
  // 200 calls in flight at once, spread over 8 connections through the pipe.
  std::vector<std::unique_ptr<CriClient>> connections;
  connections.reserve(8);
  for (int c = 0; c < 8; ++c) {
    connections.push_back(std::make_unique<CriClient>(DialTarget(dxshim_->pipe_target())));
  }
  std::atomic<int> good{0};
  std::mutex failures_mutex;
  std::string failures;
  std::vector<std::thread> callers;
  callers.reserve(200);
  for (int i = 0; i < 200; ++i) {
    callers.emplace_back([&, i] {
      v1::VersionResponse v;
      const auto answer = connections[static_cast<std::size_t>(i % 8)]->Version(&v, seconds(60));
      if (answer.ok() && v.runtime_name() == "containerd") {
        ++good;
      } else {
        std::lock_guard lock(failures_mutex);
        failures += std::to_string(answer.error_code()) + " " + answer.error_message() + "\n";
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(good, 200) << failures << dxshim_->Log();
}

// dxshim.exe says who made CRI calls through its pipe (dxshim install's proof that the running
// kubelet talks to dxshim): the pipe's client process by its program's name, with its calls
// counted; asked around the pipe, it refuses as it refuses every call.
TEST_F(WindowsExeEndToEnd, ItSaysWhichProcessesMadeCriCallsThroughItsPipe) {
  const auto ask = [](const std::string& target, dxshim::v1::CriCallersResponse& answer) {
    const auto stub = dxshim::v1::NodeStatus::NewStub(DialTarget(target));
    return stub->CriCallers(Deadline(seconds(30)).get(), {}, &answer);
  };
  v1::VersionResponse v;
  ASSERT_TRUE(client_->Version(&v, seconds(30)).ok());
  dxshim::v1::CriCallersResponse first;
  ASSERT_TRUE(ask(dxshim_->pipe_target(), first).ok()) << dxshim_->Log();
  EXPECT_NE(first.server_pid(), 0U);
  const auto relay = std::find_if(first.callers().begin(), first.callers().end(),
                                  [](const auto& c) { return c.program() == "pipe-relay.exe"; });
  ASSERT_NE(relay, first.callers().end()) << first.DebugString();
  EXPECT_GE(relay->calls(), 1U);
  EXPECT_GT(relay->first_call_unix_ms(), 0);
  ASSERT_TRUE(client_->Version(&v, seconds(30)).ok());
  dxshim::v1::CriCallersResponse second;
  ASSERT_TRUE(ask(dxshim_->pipe_target(), second).ok());
  const auto again = std::find_if(second.callers().begin(), second.callers().end(),
                                  [&](const auto& c) { return c.pid() == relay->pid(); });
  ASSERT_NE(again, second.callers().end()) << second.DebugString();
  EXPECT_GE(again->calls(), relay->calls() + 2) << "a Version and the question itself";
  EXPECT_EQ(second.server_pid(), first.server_pid());
}

// No unauthenticated local process reaches dxshim.exe's gRPC parser: its CRI server listens on
// no port (each pipe connection is handed to it, shim/socket_bridge/socket_pair.h), and the one
// loopback port it listens on here, the metrics endpoint's (HTTP/1, dxshim's own parser), takes a
// gRPC call's first bytes from `nobody` (the HTTP/2 preface, SETTINGS and HEADERS) only to refuse
// them, counted in dxshim_http_refusals_total. (The runtime forwarder's refusals are
// pipe_transport_test's; this test's runtime is containerd on TCP.)
TEST_F(WindowsExeEndToEnd, ImpostorBytesOnEveryLoopbackPortReachNoGrpcParser) {
  v1::VersionResponse v;
  ASSERT_TRUE(client_->Version(&v, seconds(30)).ok());  // a pipe connection is live
  const auto at = MetricsAddress(dxshim_->Log());
  ASSERT_NE(at, "") << dxshim_->Log();
  const auto metrics_port = static_cast<std::uint16_t>(std::stoi(at.substr(at.rfind(':') + 1)));
  EXPECT_EQ(dxshim_->ListeningPorts(), std::vector<std::uint16_t>{metrics_port}) << dxshim_->Log();
  const auto refusals = [&] {
    const auto text = HttpGet(at, "/metrics").body;
    double sum = 0;
    for (const auto* reason :
         {"request_timeout", "response_timeout", "per_address_limit", "total_limit", "fd_limit",
          "too_large", "malformed", "method_not_allowed", "internal_error"}) {
      const double n =
          Sample(text, "dxshim_http_refusals_total", {"reason=\"" + std::string(reason) + "\""});
      if (!std::isnan(n)) sum += n;
    }
    return sum;
  };
  const double before = refusals();
  const auto answer = SendHttp2AsNobody(metrics_port, dir_->path());
  EXPECT_FALSE(answer.http2_settings) << answer.output;
  EXPECT_NE(answer.ended, "timeout") << "closed early, not left open: " << answer.output;
  EXPECT_TRUE(WaitFor([&] { return refusals() == before + 1; }, seconds(5)))
      << "one refusal counted: " << before << " before, " << refusals() << " after\n"
      << HttpGet(at, "/metrics").body;
  // No call after the last scrape: the endpoint's one-second rendering stays exact for the next
  // test.
}

TEST_F(WindowsExeEndToEnd, TheMetricsEndpointServesTheSameMetrics) {
  // dxshim.exe serves /metrics, /healthz and /readyz like the Linux build (wine's sockets are the
  // host's, so the test reaches it from Linux).
  const auto at = MetricsAddress(dxshim_->Log());
  ASSERT_NE(at, "") << dxshim_->Log();
  const auto calls = [&] {
    const auto r = HttpGet(at, "/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    return Sample(r.body, "dxshim_cri_calls_total", {"method=\"Version\"", "code=\"OK\""});
  };
  const double before = calls();
  v1::VersionResponse v;
  ASSERT_TRUE(client_->Version(&v, seconds(30)).ok());
  // One rendering answers every scrape within a second: the call shows in a later one.
  const double expected = (std::isnan(before) ? 0 : before) + 1;
  double after = before;
  EXPECT_TRUE(WaitFor([&] { return (after = calls()) >= expected; }, seconds(5)));
  EXPECT_EQ(after, expected);
  const auto text = HttpGet(at, "/metrics").body;
  EXPECT_EQ(Sample(text, "dxshim_build_info", {"platform=\"windows/amd64\""}), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 1);
  EXPECT_EQ(Sample(text, "dxshim_runtime_connected"), 1);
  EXPECT_FALSE(std::isnan(
      Sample(text, "dxshim_create_container_decisions_total", {"outcome=\"injected\""})));
  EXPECT_EQ(HttpGet(at, "/healthz").status, 200);
  EXPECT_TRUE(WaitFor([&] { return HttpGet(at, "/readyz").status == 200; }, seconds(30)))
      << HttpGet(at, "/readyz").body;
  std::ofstream(*dir_ / "metrics.txt") << text;
  Process promtool({"sh", "-c", "promtool check metrics < " + *dir_ / "metrics.txt"},
                   *dir_ / "promtool.log");
  EXPECT_EQ(promtool.Wait(seconds(60)), 0) << promtool.Log();
}

TEST_F(WindowsExeEndToEnd, ContainerdRestartIsUnavailableThenRecoversWithoutRestartingDxshim) {
  v1::VersionResponse v;
  ASSERT_TRUE(client_->Version(&v, seconds(30)).ok());
  containerd_->Kill();
  const auto down = client_->Version(&v, seconds(30));
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
  containerd_->Restart();
  const bool back = WaitFor([&] { return client_->Version(&v, seconds(10)).ok(); }, seconds(90));
  EXPECT_TRUE(back) << dxshim_->Log();
  EXPECT_TRUE(dxshim_->running());
  // And CRI work goes on: a pod runs.
  std::string pod, container;
  const auto config = RunPod("wine-after-restart", false, &pod);
  EXPECT_TRUE(CreateAndStart(pod, config, &container).ok());
  client_->RemovePod(pod);
}

}  // namespace
}  // namespace dxshim::test
