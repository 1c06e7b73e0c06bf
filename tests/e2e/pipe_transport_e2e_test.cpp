// Real gRPC and a real containerd through dxshim's Windows named-pipe transport alone (the whole
// dxshim.exe: windows_exe_e2e_test). The Windows half runs under wine in the middle of a Linux
// CRI connection (wine's sockets are the host's):
//   CRI client --TCP--> [wine: PipeForwarder --\\.\pipe\..--> PipeAcceptor] --TCP--> dxshim
//   (Linux, listening on tcp://127.0.0.1:0) --unix--> containerd
// On a Windows node the same bridges sit between kubelet's pipe and dxshim's gRPC server, and
// between dxshim's gRPC channel and containerd's pipe. What only Windows can show (pipe security,
// the service, the MSVC build) is in deploy/windows/CHECKLIST.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/process.h"
#include "tests/support/test_gpu.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

// The port in the first "<marker><port>" of `log`, or 0.
int PortAfter(const std::string& log, const std::string& marker) {
  const auto at = log.find(marker);
  return at == std::string::npos ? 0 : std::atoi(log.c_str() + at + marker.size());
}

class PipeTransportEndToEnd : public testing::Test {
 protected:
  void SetUp() override {
    // One "GPU" (a device node; no GPU here) with one runtime file.
    std::filesystem::create_directories(dir_ / "store");
    std::ofstream(dir_ / "store/libdxgpu.so") << "through the pipe\n";
    WriteTestGpuInventory(dir_ / "inventory.yaml", {&device_}, "e3", dir_ / "store");

    dxshim_ = std::make_unique<Process>(
        std::vector<std::string>{DXSHIM_BINARY, "serve", "--listen", "tcp://127.0.0.1:0",
                                 "--runtime", "unix://" + containerd_.socket(), "--device-source",
                                 "inventory:" + dir_ / "inventory.yaml", "--target", "linux"},
        dir_ / "dxshim.log");
    ASSERT_TRUE(WaitFor([&] { return PortAfter(dxshim_->Log(), "listening on tcp://127.0.0.1:"); },
                        seconds(20)))
        << dxshim_->Log();
    const int dxshim_port = PortAfter(dxshim_->Log(), "listening on tcp://127.0.0.1:");

    relay_ = std::make_unique<Process>(
        std::vector<std::string>{DXSHIM_SOURCE_DIR "/tests/support/run_under_wine.sh",
                                 DXSHIM_PIPE_RELAY_EXE, "dxshim-e2e-" + std::to_string(::getpid()),
                                 std::to_string(dxshim_port), dir_ / "stop-relay"},
        dir_ / "relay.log");
    ASSERT_TRUE(WaitFor(
        [&] { return PortAfter(relay_->Log(), "forwarder-port ") != 0 || !relay_->running(); },
        seconds(120)))
        << relay_->Log();
    const int relay_port = PortAfter(relay_->Log(), "forwarder-port ");
    ASSERT_NE(relay_port, 0) << relay_->Log();
    client_ = std::make_unique<CriClient>(DialTarget("127.0.0.1:" + std::to_string(relay_port)));
  }

  void TearDown() override {
    client_.reset();
    std::ofstream(dir_ / "stop-relay") << "stop\n";
    const auto relay_code = relay_->Wait(seconds(60));
    EXPECT_EQ(relay_code, 0) << relay_->Log();
    EXPECT_NE(relay_->Log().find("relay stopped"), std::string::npos) << relay_->Log();
    dxshim_->Signal(SIGTERM);
    EXPECT_EQ(dxshim_->Wait(seconds(30)), 0) << dxshim_->Log();
  }

  Containerd containerd_;
  TempDir dir_;
  DeviceNode device_{"pipe-e2e", 0};
  std::unique_ptr<Process> dxshim_;
  std::unique_ptr<Process> relay_;
  std::unique_ptr<CriClient> client_;
};

TEST_F(PipeTransportEndToEnd, AGpuPodRunsThroughTheNamedPipe) {
  v1::VersionResponse version;
  ASSERT_TRUE(client_->Version(&version, seconds(30)).ok());
  EXPECT_EQ(version.runtime_name(), "containerd");

  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod("piped", "uid-piped", dir_ / "logs");
  (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
  v1::RunPodSandboxResponse pod;
  auto s = client_->runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod);
  ASSERT_TRUE(s.ok()) << s.error_message();

  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(pod.pod_sandbox_id());
  *create.mutable_config() = SleepingBusybox("app");
  *create.mutable_sandbox_config() = run.config();
  v1::CreateContainerResponse created;
  s = client_->runtime->CreateContainer(Deadline(seconds(60)).get(), create, &created);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << dxshim_->Log();
  v1::StartContainerRequest start;
  start.set_container_id(created.container_id());
  v1::StartContainerResponse started;
  ASSERT_TRUE(client_->runtime->StartContainer(Deadline(seconds(60)).get(), start, &started).ok());

  // dxshim's injection arrived: the device node and the runtime file are in the container.
  v1::ExecSyncRequest exec;
  exec.set_container_id(created.container_id());
  exec.add_cmd("sh");
  exec.add_cmd("-c");
  exec.add_cmd("cat /usr/lib/dxshim/libdxgpu.so; test -c " + device_.path() + " && echo device");
  exec.set_timeout(20);
  v1::ExecSyncResponse out;
  ASSERT_TRUE(client_->runtime->ExecSync(Deadline(seconds(30)).get(), exec, &out).ok());
  EXPECT_EQ(out.stdout_data(), "through the pipe\ndevice\n") << out.stderr_data();

  // Large messages both ways: a 6 MiB exec output and a 6 MiB request (an annotation).
  exec.clear_cmd();
  exec.add_cmd("sh");
  exec.add_cmd("-c");
  exec.add_cmd("head -c 6291456 /dev/zero | tr '\\0' x");
  ASSERT_TRUE(client_->runtime->ExecSync(Deadline(seconds(60)).get(), exec, &out).ok());
  EXPECT_EQ(out.stdout_data(), std::string(6u << 20, 'x'));
  v1::PodSandboxStatusRequest status;
  status.set_pod_sandbox_id(pod.pod_sandbox_id());
  status.set_verbose(true);
  v1::ListContainersRequest list;
  (*list.mutable_filter()->mutable_label_selector())["big"] = std::string(6u << 20, 'y');
  v1::ListContainersResponse listed;
  s = client_->runtime->ListContainers(Deadline(seconds(60)).get(), list, &listed);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(listed.containers_size(), 0);

  // Many calls at once over several connections (each client its own connection).
  std::atomic<int> good{0};
  std::mutex failures_mutex;
  std::string failures;
  std::vector<std::thread> callers;
  const int relay_port = PortAfter(relay_->Log(), "forwarder-port ");
  for (int c = 0; c < 8; ++c) {
    callers.emplace_back([&] {
      CriClient own(DialTarget("127.0.0.1:" + std::to_string(relay_port)));
      for (int i = 0; i < 25; ++i) {
        v1::VersionResponse v;
        const auto answer = own.Version(&v, seconds(30));
        if (answer.ok() && v.runtime_name() == "containerd") {
          ++good;
        } else {
          std::lock_guard lock(failures_mutex);
          failures += std::to_string(answer.error_code()) + " " + answer.error_message() + "\n";
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(good, 200) << failures << "relay:\n" << relay_->Log() << "dxshim:\n" << dxshim_->Log();

  // The runtime's own errors come back as they are.
  v1::ContainerStatusRequest missing;
  missing.set_container_id("no-such-container");
  v1::ContainerStatusResponse missing_status;
  s = client_->runtime->ContainerStatus(Deadline(seconds(30)).get(), missing, &missing_status);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();

  client_->RemovePod(pod.pod_sandbox_id());
}

}  // namespace
}  // namespace dxshim::test
