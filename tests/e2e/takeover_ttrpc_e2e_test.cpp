// The takeover `dxshim install` makes on AKS (containerd's gRPC address moved in its config.toml,
// dxshim serving the old one: shim/install/edit/containerd_config.h MoveGrpcKeepTtrpc), done to a
// real containerd whose real runc shims publish their events (TaskExit, TaskOOM, exec exits) to the
// TTRPC address they were started with, read once (containerd v1.6 runtime/v2/shim/shim.go; on
// Windows hcsshim cmd/containerd-shim-runhcs-v1/serve.go reads it the same way). The config is
// AKS's: [ttrpc] address empty (AgentBaker containerdtemplate.toml), so TTRPC follows the gRPC
// address unless the takeover writes it out.
//
// A task started before the takeover and killed after it must reach containerd's event stream as
// /tasks/exit, seen by a client of the old address through dxshim (as `ctr events` on the node).
// The second test is the control: with the gRPC address moved alone, the same exit never reaches
// the stream (nothing serves the TTRPC address the shim keeps publishing to), while containerd,
// asked directly, knows the task stopped. This is Linux containerd and runc standing in for
// Windows containerd and runhcs: the shim's side (one address, read once) is the same code.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "shim/install/edit/containerd_config.h"
#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/read_file.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// `ctr --address ADDRESS ARGS...` to completion: exit code and output.
std::pair<int, std::string> Ctr(const TempDir& dir, const std::string& address,
                                const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ctr", "--address", address};
  argv.insert(argv.end(), args.begin(), args.end());
  Process ctr(argv, dir / "ctr.log");
  const auto code = ctr.Wait(seconds(60));
  return {code.value_or(-1), ctr.Log()};
}

class TakeoverTtrpc : public ::testing::Test {
 protected:
  // containerd as AKS configures it, a task running in it, then the takeover made with `edit`
  // (the config's text and the moved address -> the new text), dxshim on the old address, and a
  // `ctr events` subscription through dxshim.
  void TakeOver(const std::function<std::string(const std::string&, const std::string&)>& edit) {
    old_socket_ = containerd_.socket();
    containerd_.Stop();
    std::string config = Read(containerd_.config_path());
    const auto at = config.find("[ttrpc]\n  address = \"");
    ASSERT_NE(at, std::string::npos) << config;
    config.replace(at, config.find('\n', at + 9) - at, "[ttrpc]\n  address = \"\"");
    Write(containerd_.config_path(), config);
    containerd_.Restart();
    ASSERT_EQ(install::ServedPipes(config).ttrpc, old_socket_ + ".ttrpc");

    CriClient cri(containerd_.socket());
    v1::RunPodSandboxRequest run;
    *run.mutable_config() = HostNetworkPod("ttrpc", "uid-ttrpc", dir_ / "logs");
    v1::RunPodSandboxResponse pod;
    ASSERT_TRUE(cri.runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod).ok());
    ASSERT_TRUE(
        cri.CreateAndStart(pod.pod_sandbox_id(), run.config(), SleepingBusybox("task"), &task_)
            .ok());

    const std::string moved = dir_ / "behind-dxshim.sock";
    containerd_.Stop();  // its shims keep the task running
    Write(containerd_.config_path(), edit(Read(containerd_.config_path()), moved));
    containerd_.ServeAt(moved);
    containerd_.Restart();
    dxshim_ = std::make_unique<DxshimProcess>(old_socket_, moved, dir_ / "dxshim.log");
    events_ = std::make_unique<Process>(
        std::vector<std::string>{"ctr", "--address", old_socket_, "events"}, dir_ / "events.log");
    // Subscribed once an event of our own comes through (one made before the subscription took
    // is not seen: another is made until one is).
    int probes = 0;
    ASSERT_TRUE(WaitFor(
        [&] {
          Ctr(dir_, old_socket_, {"namespaces", "create", "probe-" + std::to_string(++probes)});
          return events_->Log().find("/namespaces/create") != std::string::npos;
        },
        seconds(30)))
        << events_->Log() << dxshim_->process().Log();
    const auto kill =
        Ctr(dir_, old_socket_, {"-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", task_});
    ASSERT_EQ(kill.first, 0) << kill.second;
  }

  bool ExitSeen() {
    const std::string log = events_->Log();
    const auto at = log.find("/tasks/exit");
    return at != std::string::npos && log.find(task_, at) != std::string::npos;
  }

  TempDir dir_;
  Containerd containerd_;
  std::string old_socket_;
  std::string task_;
  std::unique_ptr<DxshimProcess> dxshim_;
  std::unique_ptr<Process> events_;
};

TEST_F(TakeoverTtrpc, ATaskStartedBeforeAndKilledAfterReachesContainerdAsExited) {
  TakeOver([](const std::string& toml, const std::string& moved) {
    return install::MoveGrpcKeepTtrpc(toml, moved);
  });
  EXPECT_TRUE(WaitFor([&] { return ExitSeen(); }, seconds(60)))
      << "events through dxshim:\n"
      << events_->Log() << "\ncontainerd:\n"
      << containerd_.Log();
}

TEST_F(TakeoverTtrpc, WithTheGrpcAddressMovedAloneTheExitNeverReachesTheEventStream) {
  TakeOver([](const std::string& toml, const std::string& moved) {
    return install::SetServerAddress(toml, install::ContainerdServer::kGrpc, moved);
  });
  // The task is gone, by containerd's own account: CRI, asked directly, reports the container
  // exited. Its restart recovery waits on each running task over the shim's own connection and
  // handles the exit without the event (containerd v1.6.20 pkg/cri/server/restart.go loadContainer,
  // t.Wait and startContainerExitMonitor), deleting the task: `ctr tasks ls` shows it STOPPED only
  // until then (under load, sometimes never). The minute matches the other waits here.
  CriClient direct(containerd_.socket());
  const auto exited = [&] {
    v1::ContainerStatusRequest request;
    request.set_container_id(task_);
    v1::ContainerStatusResponse response;
    return direct.runtime->ContainerStatus(Deadline(seconds(10)).get(), request, &response).ok() &&
           response.status().state() == v1::CONTAINER_EXITED;
  };
  ASSERT_TRUE(WaitFor(exited, seconds(60)))
      << Ctr(dir_, containerd_.socket(), {"-n", "k8s.io", "tasks", "ls"}).second
      << "\ncontainerd:\n"
      << containerd_.Log();
  // ...but its shim publishes the exit to a TTRPC address nobody serves any more (it retries,
  // then drops it: runtime/v2/shim/publisher.go), and says so in the log containerd keeps of it.
  EXPECT_TRUE(WaitFor([&] { return containerd_.Log().find("post event") != std::string::npos; },
                      seconds(60)))
      << containerd_.Log();
  EXPECT_FALSE(ExitSeen()) << events_->Log();
}

}  // namespace
}  // namespace dxshim::test
