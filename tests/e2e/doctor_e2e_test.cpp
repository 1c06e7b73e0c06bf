// `dxshim doctor` on a node made of real parts: a real containerd, the real dxshim serving its
// device plugin and metrics, a test kubelet (tests/support/test_kubelet.h) that registers the
// plugin and keeps kubelet_internal_checkpoint in kubelet's format, and a process named kubelet
// whose command line carries kubelet's flags (tests/support/kubelet_standin_main.cpp: only
// kubelet is stood in for). A healthy node is all ✓ with exit 0; each fault on its own (dxshim
// stopped, containerd down, kubelet pointing at containerd, the plugin not registered, a runtime
// file deleted, the metrics endpoint not answering) fails the line it should, naming the fix.
// The JSON output is read with protobuf's JSON parser.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "shim/socket_bridge/socket_api.h"
#include "tests/support/gpu_node.h"
#include "tests/support/read_file.h"
#include "tests/support/test_kubelet.h"

namespace dxshim::test {
namespace {

using std::chrono::seconds;
constexpr auto kWait = seconds(30);

struct Line {
  std::string check;
  std::string status;
  std::string detail;
  std::string fix;
};

struct DoctorRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  std::vector<Line> lines;
  double ms = 0;

  // The lines of `check` (a prefix: "GPU", "device plugin").
  std::vector<Line> Of(const std::string& check) const {
    std::vector<Line> found;
    for (const auto& l : lines) {
      if (l.check.rfind(check, 0) == 0) found.push_back(l);
    }
    return found;
  }
  // The one line of exactly `check`.
  Line Exact(const std::string& check) const {
    for (const auto& l : lines) {
      if (l.check == check) return l;
    }
    return {check, "(no line)", "", ""};
  }
  std::string Text() const { return out + err; }
};

// Whether a process named kubelet runs that this test did not start.
bool OtherKubeletRuns() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm(entry.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == "kubelet") return true;
  }
  return false;
}

int FreePort() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
  close(s);
  return ntohs(a.sin_port);
}

class Doctor : public GpuNodeTest {
 protected:
  Doctor() : plugin_dir_(dir_ / "device-plugins"), config_(dir_ / "dxshim.yaml") {
    std::filesystem::create_directories(plugin_dir_);
    metrics_ = "127.0.0.1:" + std::to_string(FreePort());
    std::ofstream(config_) << "listen: unix://" << (dir_ / "dxshim.sock") << "\n"
                           << "runtime: unix://" << containerd_.socket() << "\n"
                           << "device-source: inventory:" << (dir_ / "inventory.yaml") << "\n"
                           << "target: linux\n"
                           << "linux-system32-path: /usr/lib/dxshim\n"
                           << "max-containers-per-device: 2\n"
                           << "device-plugin: true\n"
                           << "device-plugin-dir: " << plugin_dir_ << "\n"
                           << "metrics-listen: " << metrics_
                           << "\n"
                           // The test containerd's second handler says SandboxIsolation = 1
                           // (scripts/containerd-config.sh), as a Hyper-V handler does.
                           << "vm-runtime-handlers: [dxshim-test-vm]\n";
  }

  // dxshim with the configuration file, kubelet's device manager, and a GPU pod.
  void StartHealthyNode() {
    kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
    StartDxshim(2, {"--config", config_});
    ASSERT_TRUE(kubelet_->WaitForDevices(
        [](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == 2; }, kWait))
        << Log();
    std::map<std::string, std::string> annotations;
    ASSERT_TRUE(kubelet_->Allocate(1, &annotations).ok()) << Log();
    const auto pod = RunPod("render", false);
    auto config = SleepingBusybox("unreal");
    for (const auto& [k, v] : annotations) (*config.mutable_annotations())[k] = v;
    std::string container;
    ASSERT_TRUE(CreateAndStart(pod, config, &container).ok()) << Log();
    // The memory plugin's list follows the pod's reservation (8 of 16 units) on its own time.
    ASSERT_TRUE(kubelet_->WaitForDevices(
        [](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == 8; }, kWait,
        TestKubelet::kGpuMemory))
        << Log();
  }

  // A process named kubelet with these arguments (once it has that name: the fork that starts
  // it is still the test's until it execs), run as root unless `as_nobody`.
  void StartKubeletProcess(const std::vector<std::string>& args, bool as_nobody = false) {
    std::vector<std::string> argv = {KUBELET_STANDIN};
    if (as_nobody) {
      argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    kubelet_process_ = std::make_unique<Process>(argv, dir_ / "kubelet-standin.log");
    const auto comm = "/proc/" + std::to_string(kubelet_process_->pid()) + "/comm";
    ASSERT_TRUE(WaitFor([&] { return ReadFile(comm) == "kubelet\n"; }, kWait));
  }
  void StartKubeletUsing(const std::string& endpoint) {
    StartKubeletProcess({"--container-runtime-endpoint=" + endpoint, "--v=2"});
  }

  DoctorRun RunDoctor(std::vector<std::string> extra = {}) {
    const auto err_path = dir_ / "doctor.err";
    std::filesystem::remove(err_path);
    std::vector<std::string> argv = {"/bin/sh",     "-c",       "exec \"$0\" \"$@\" 2>>" + err_path,
                                     DXSHIM_BINARY, "doctor",   "--config",
                                     config_,       "--output", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto out_path = dir_ / "doctor.out";
    std::filesystem::remove(out_path);
    const auto start = std::chrono::steady_clock::now();
    Process p(argv, out_path);
    DoctorRun run;
    run.code = p.Wait(seconds(60)).value_or(-1);
    run.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run.out = p.Log();
    run.err = ReadFile(err_path);
    google::protobuf::ListValue list;
    const auto parsed = google::protobuf::util::JsonStringToMessage(run.out, &list);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString() << "\n" << run.out << run.err;
    for (const auto& v : list.values()) {
      const auto& f = v.struct_value().fields();
      const auto get = [&](const char* key) {
        const auto it = f.find(key);
        return it == f.end() ? std::string("(missing)") : it->second.string_value();
      };
      run.lines.push_back({get("check"), get("status"), get("detail"), get("fix")});
    }
    return run;
  }

  // Every line ok but those named in `not_ok` (check prefix -> status), of which at least one
  // has that status and the others are ok.
  void ExpectOnly(const DoctorRun& run, const std::map<std::string, std::string>& not_ok) {
    for (const auto& l : run.lines) {
      std::string wanted = "ok";
      for (const auto& [prefix, status] : not_ok) {
        if (l.check.rfind(prefix, 0) == 0) wanted = status;
      }
      if (wanted != "ok" && l.status == "ok") continue;
      EXPECT_EQ(l.status, wanted) << l.check << ": " << l.detail << "\n" << run.Text();
      if (l.status == "ok") {
        EXPECT_EQ(l.fix, "") << l.check;
      } else {
        EXPECT_NE(l.fix, "") << l.check << " says what is wrong but not what to do";
      }
    }
    for (const auto& [prefix, status] : not_ok) {
      const auto lines = run.Of(prefix);
      EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                              [&, &status = status](const Line& l) { return l.status == status; }))
          << prefix << " is not " << status << "\n"
          << run.Text();
    }
  }

  const std::string plugin_dir_;
  const std::string config_;
  std::string metrics_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::unique_ptr<Process> kubelet_process_;
};

TEST_F(Doctor, AHealthyNodeIsAllOkAndExitsZero) {
  StartHealthyNode();
  // kubelet's endpoint in its --config file, as kubeadm writes it.
  const auto kubelet_config = dir_ / "kubelet-config.yaml";
  std::ofstream(kubelet_config) << "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                << "kind: KubeletConfiguration\n"
                                << "containerRuntimeEndpoint: unix://" << (dir_ / "dxshim.sock")
                                << "\n";
  StartKubeletProcess({"--config", kubelet_config, "--v=2"});
  const auto run = RunDoctor();
  std::printf("%s", run.out.c_str());
  EXPECT_EQ(run.code, 0) << run.Text();
  ExpectOnly(run, {});
  // The nine checks, in order.
  std::vector<std::string> order;
  for (const auto& l : run.lines) {
    const auto word = l.check.substr(0, l.check.find(' '));
    if (order.empty() || order.back() != word) order.push_back(word);
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"configuration", "dxshim", "runtime", "kubelet", "device",
                                      "other", "GPU", "vm-runtime-handlers", "metrics", "holders"}))
      << run.Text();
  // Who serves each endpoint, from the system (SO_PEERCRED): dxshim, and containerd.
  EXPECT_NE(run.Of("dxshim")[0].detail.find(
                "dxshim.sock, served by dxshim (pid " + std::to_string(dxshim_->process().pid()) +
                "), answers, relaying to unix://" + containerd_.socket() + ": containerd 1.6"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.Of("runtime")[0].detail.find(containerd_.socket() + ", served by containerd (pid "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.Of("kubelet")[0].detail.find("the --config file " + kubelet_config),
            std::string::npos)
      << run.out;
  // One slot of two taken by the pod is still healthy in kubelet's count (kubelet counted it);
  // its memory reservation took 8 of the 16 memory units (the scheduler did not count it).
  EXPECT_NE(run.Exact("device plugin dxshim.io/gpu")
                .detail.find("dxshim.sock serves 2 healthy of 2 advertised; kubelet has them "
                             "registered"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.Exact("device plugin dxshim.io/gpu-memory")
                .detail.find("dxshim-memory.sock serves 8 healthy of 16 advertised; kubelet has "
                             "them registered"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.Exact("other GPU device plugins").detail, "none registered with kubelet")
      << run.out;
  const auto gpu = run.Of("GPU 0000:e2:00.0");
  ASSERT_EQ(gpu.size(), 1u) << run.out;
  EXPECT_NE(gpu[0].detail.find("16Gi, LUID 0x00000000_0x000E2E20"), std::string::npos) << run.out;
  EXPECT_NE(gpu[0].detail.find("1 runtime file(s) present"), std::string::npos) << run.out;
  EXPECT_NE(run.Of("metrics")[0].detail.find("/readyz answers ready"), std::string::npos)
      << run.out;
  const auto holders = run.Of("holders");
  ASSERT_EQ(holders.size(), 1u) << run.out;
  EXPECT_NE(holders[0].detail.find("/render (unreal) holds 0000:e2:00.0 8Gi"), std::string::npos)
      << run.out;
  std::printf("[ measured ] dxshim doctor on a healthy node: %.0f ms\n", run.ms);

  // The doctor's look at the plugin (a ListAndWatch stream it ends) is not taken for kubelet
  // going away: after two of the plugin's watch intervals, still the one registration.
  EXPECT_NE(Log().find("device plugin: an observer is watching"), std::string::npos) << Log();
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(kubelet_->registrations(), 1u) << Log();
  EXPECT_EQ(kubelet_->registrations(TestKubelet::kGpuMemory), 1u) << Log();

  // The table: one line per check, and the count.
  std::string table;
  EXPECT_EQ(RunDxshim({"doctor", "--config", config_}, dir_ / "table.out", &table), 0) << table;
  EXPECT_NE(table.find("\u2713 kubelet"), std::string::npos) << table;
  EXPECT_NE(table.find(" checks: 0 failed, 0 warning(s), in "), std::string::npos) << table;
}

TEST_F(Doctor, DxshimNotRunning) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  ASSERT_EQ(dxshim_->Stop(), 0);
  const auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  // Its plugin went with it (kubelet still counts the devices until its grace period ends).
  ExpectOnly(run, {{"dxshim", "failed"}, {"device plugin", "failed"}, {"metrics", "failed"}});
  EXPECT_NE(run.Of("dxshim")[0].detail.find("nothing accepts a connection on unix://"),
            std::string::npos);
  EXPECT_NE(run.Of("dxshim")[0].fix.find("start dxshim"), std::string::npos);
}

TEST_F(Doctor, ContainerdDown) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  containerd_.Kill();
  const auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  // dxshim answers, but relays Version to a runtime that is gone; its /readyz says so.
  ExpectOnly(run, {{"dxshim", "warning"},
                   {"runtime", "failed"},
                   {"metrics", "failed"},
                   {"holders", "warning"}});
  EXPECT_NE(run.Of("runtime")[0].detail.find(containerd_.socket()), std::string::npos);
  EXPECT_NE(run.Of("runtime")[0].fix.find("start containerd"), std::string::npos);
  EXPECT_NE(run.Of("metrics")[0].detail.find("503"), std::string::npos) << run.Text();
}

TEST_F(Doctor, KubeletPointingAtContainerdDirectly) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + containerd_.socket());
  const auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  ExpectOnly(run, {{"kubelet", "failed"}});
  const auto line = run.Exact("kubelet");
  EXPECT_NE(line.detail.find("uses unix://" + containerd_.socket() +
                             " (its --container-runtime-endpoint), not dxshim's unix://" +
                             dir_ / "dxshim.sock"),
            std::string::npos)
      << line.detail;
  EXPECT_NE(line.fix.find("point kubelet at unix://" + dir_ / "dxshim.sock"), std::string::npos)
      << line.fix;

  // No kubelet at all: a warning (not on a machine that runs a real one).
  kubelet_process_.reset();
  if (OtherKubeletRuns()) GTEST_SKIP() << "a kubelet runs on this machine";
  const auto none = RunDoctor();
  EXPECT_EQ(none.code, 0) << none.Text();
  ExpectOnly(none, {{"kubelet", "warning"}});
  EXPECT_EQ(none.Exact("kubelet").detail, "no kubelet found on this node");

  // A process any user can start under that name is not believed: only root's count.
  StartKubeletProcess({"--container-runtime-endpoint=unix://" + containerd_.socket()},
                      /*as_nobody=*/true);
  const auto impostor = RunDoctor();
  EXPECT_EQ(impostor.code, 0) << impostor.Text();
  ExpectOnly(impostor, {{"kubelet", "warning"}});
  EXPECT_EQ(impostor.Exact("kubelet").detail, "no kubelet found on this node");
}

TEST_F(Doctor, PluginNotRegistered) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  kubelet_->set_refuse_registrations(true);
  StartDxshim(2, {"--config", config_});
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  ASSERT_TRUE(WaitFor(
      [&] { return Log().find("registration of dxshim.io/gpu refused") != std::string::npos; },
      kWait))
      << Log();
  auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  ExpectOnly(run, {{"device plugin", "failed"}});
  EXPECT_NE(run.Of("device plugin")[0].detail.find("kubelet has not registered it: there is no " +
                                                   plugin_dir_ + "/kubelet_internal_checkpoint"),
            std::string::npos)
      << run.Text();

  // A kubelet with another plugin registered, in its own checkpoint (kubelet's format).
  std::ofstream(plugin_dir_ + "/kubelet_internal_checkpoint")
      << R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"example.com/fpga":["fpga-0"]}},)"
      << R"("Checksum":2775564104})";
  run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  EXPECT_NE(run.Exact("device plugin dxshim.io/gpu")
                .detail.find("kubelet has not registered it (its checkpoint lists "
                             "example.com/fpga), so the scheduler sees no dxshim.io/gpu capacity"),
            std::string::npos)
      << run.Text();
}

TEST_F(Doctor, AnImpostorOnDxshimsSocketIsNotTakenForDxshim) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "impostor.sock");
  // A local process listens where the configuration says dxshim does (this test, here).
  std::string error;
  const auto impostor = socket_bridge::ListenUnix(dir_ / "impostor.sock", error);
  ASSERT_TRUE(impostor.valid()) << error;
  const auto run = RunDoctor({"--listen", "unix://" + dir_ / "impostor.sock"});
  EXPECT_EQ(run.code, 1) << run.Text();
  const auto line = run.Exact("dxshim");
  EXPECT_EQ(line.status, "failed") << run.Text();
  EXPECT_NE(line.detail.find("impostor.sock is served by doctor_e2e_tes"), std::string::npos)
      << line.detail;
  EXPECT_NE(line.detail.find("(pid " + std::to_string(getpid()) + "), not by dxshim"),
            std::string::npos)
      << line.detail;
}

TEST_F(Doctor, RuntimeFileDeleted) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  const auto file = dir_ / "store/libdxgpu.so";
  ASSERT_TRUE(std::filesystem::remove(file));
  const auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  ExpectOnly(run, {{"GPU", "failed"}});
  const auto line = run.Of("GPU").at(0);
  EXPECT_NE(line.detail.find("missing: " + file + " (DriverStore folder " + dir_ / "store" + ")"),
            std::string::npos)
      << line.detail;
  EXPECT_NE(line.fix.find("reinstall the GPU's driver"), std::string::npos);
}

TEST_F(Doctor, MetricsEndpointNotAnswering) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  // The file names another port than the one dxshim serves (changed, dxshim not restarted).
  const auto other = "127.0.0.1:" + std::to_string(FreePort());
  const auto run = RunDoctor({"--metrics-listen", other});
  EXPECT_EQ(run.code, 1) << run.Text();
  ExpectOnly(run, {{"metrics", "failed"}});
  EXPECT_NE(run.Of("metrics")[0].detail.find("nothing answers http://" + other + "/readyz"),
            std::string::npos)
      << run.Text();
}

TEST_F(Doctor, AVirtualMachineHandlerNotListedIsAWarning) {
  StartHealthyNode();
  StartKubeletUsing("unix://" + dir_ / "dxshim.sock");
  // The operator's file lists a misspelt handler instead of the runtime's VM handler.
  const auto run = RunDoctor({"--vm-runtime-handlers", "dxshim-test-vn"});
  EXPECT_EQ(run.code, 0) << run.Text();
  ExpectOnly(run, {{"vm-runtime-handlers", "warning"}});
  const auto lines = run.Of("vm-runtime-handlers");
  ASSERT_EQ(lines.size(), 3u) << run.Text();
  EXPECT_EQ(lines[0].status, "ok");  // what is listed
  EXPECT_NE(lines[1].detail.find("the runtime's handler dxshim-test-vm runs pods in virtual "
                                 "machines"),
            std::string::npos)
      << run.Text();
  EXPECT_NE(lines[1].fix.find("add dxshim-test-vm to vm-runtime-handlers"), std::string::npos);
  EXPECT_NE(lines[2].detail.find("dxshim-test-vn is not one of the runtime's handlers "
                                 "(dxshim-test-vm, runc)"),
            std::string::npos)
      << run.Text();
}

TEST_F(Doctor, AnInvalidConfigurationIsTheFirstLineAndStopsThere) {
  auto text = ReadFile(config_);
  text.replace(text.find("max-containers-per-device: 2"), 28, "max-containers-per-device: many");
  std::ofstream(config_) << text;
  const auto run = RunDoctor();
  EXPECT_EQ(run.code, 1) << run.Text();
  ASSERT_EQ(run.lines.size(), 1u) << run.Text();
  EXPECT_EQ(run.lines[0].check, "configuration");
  EXPECT_EQ(run.lines[0].status, "failed");
  EXPECT_NE(run.lines[0].detail.find("max-containers-per-device"), std::string::npos)
      << run.lines[0].detail;
}

}  // namespace
}  // namespace dxshim::test
