#include "tests/support/gpu_node.h"

#include <signal.h>

#include <filesystem>
#include <fstream>

namespace dxshim::test {

namespace v1 = runtime::v1;
using std::chrono::seconds;

GpuNodeTest::GpuNodeTest() {
  std::filesystem::create_directories(dir_ / "store");
  std::ofstream(dir_ / "store/libdxgpu.so") << "dxshim e2e runtime file\n";
  WriteInventory(1);
}

void GpuNodeTest::WriteInventory(std::size_t devices) {
  std::vector<const DeviceNode*> nodes;
  for (std::size_t i = 0; i < devices; ++i) nodes.push_back(&nodes_[i]);
  WriteTestGpuInventory(dir_ / "inventory.yaml", nodes, "e2", dir_ / "store");
}

void GpuNodeTest::StartDxshim(unsigned max_per_device, const std::vector<std::string>& extra) {
  dxshim_.reset();  // a previous instance was killed or stopped
  std::vector<std::string> flags = {"--device-source",
                                    "inventory:" + dir_ / "inventory.yaml",
                                    "--target",
                                    "linux",
                                    "--max-containers-per-device",
                                    std::to_string(max_per_device),
                                    "--linux-system32-path",
                                    "/usr/lib/dxshim",
                                    "--log-level",
                                    "debug"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  dxshim_ = std::make_unique<DxshimProcess>(dir_ / "dxshim.sock", containerd_.socket(),
                                            dir_ / "dxshim.log", flags);
  client_ = std::make_unique<CriClient>(dxshim_->socket());
}

void GpuNodeTest::KillDxshim() {
  dxshim_->process().Signal(SIGKILL);
  dxshim_->process().Wait(seconds(10));
}

std::string GpuNodeTest::RunPod(const std::string& name, bool wants_gpu, const std::string& handler,
                                CriClient* client) {
  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod(name, "uid-" + name, dir_ / "logs");
  if (wants_gpu) (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
  run.set_runtime_handler(handler);
  v1::RunPodSandboxResponse pod;
  const auto s = (client ? client : client_.get())
                     ->runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod);
  EXPECT_TRUE(s.ok()) << s.error_message();
  configs_[pod.pod_sandbox_id()] = run.config();
  return pod.pod_sandbox_id();
}

std::string GpuNodeTest::RunPodWith(const std::string& name,
                                    const std::map<std::string, std::string>& annotations) {
  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod(name, "uid-" + name, dir_ / "logs");
  for (const auto& [key, value] : annotations)
    (*run.mutable_config()->mutable_annotations())[key] = value;
  v1::RunPodSandboxResponse pod;
  const auto s = client_->runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod);
  EXPECT_TRUE(s.ok()) << s.error_message();
  configs_[pod.pod_sandbox_id()] = run.config();
  return pod.pod_sandbox_id();
}

grpc::Status GpuNodeTest::CreateAndStart(const std::string& pod, const v1::ContainerConfig& config,
                                         std::string* id) {
  return client_->CreateAndStart(pod, configs_[pod], config, id);
}

grpc::Status GpuNodeTest::CreateAndStart(const std::string& pod, std::string* id) {
  return CreateAndStart(pod, SleepingBusybox("app"), id);
}

void GpuNodeTest::WaitUntilExited(const std::string& id) {
  const bool exited = WaitFor(
      [&] {
        v1::ContainerStatusRequest request;
        request.set_container_id(id);
        v1::ContainerStatusResponse response;
        return client_->runtime->ContainerStatus(Deadline(seconds(10)).get(), request, &response)
                   .ok() &&
               response.status().state() == v1::CONTAINER_EXITED;
      },
      seconds(30));
  EXPECT_TRUE(exited) << "container " << id << " did not exit";
}

void GpuNodeTest::WaitForResyncs(int count) {
  const auto resyncs = [&] {
    const auto log = Log();
    int n = 0;
    for (auto at = log.find("ledger: resynced"); at != std::string::npos;
         at = log.find("ledger: resynced", at + 1)) {
      ++n;
    }
    return n;
  };
  const int target = resyncs() + count;
  EXPECT_TRUE(WaitFor([&] { return resyncs() >= target; }, seconds(60)))
      << "dxshim did not resync " << count << " more time(s); its log:\n"
      << Log();
}

v1::ExecSyncResponse GpuNodeTest::Exec(const std::string& id, const std::string& script) {
  v1::ExecSyncResponse out;
  const auto s = client_->Exec(id, script, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return out;
}

std::string GpuNodeTest::DevicesOf(const std::string& id) {
  v1::ListContainersRequest list;
  list.mutable_filter()->set_id(id);
  v1::ListContainersResponse listed;
  const auto s = client_->runtime->ListContainers(Deadline(seconds(10)).get(), list, &listed);
  if (!s.ok() || listed.containers_size() != 1) {
    ADD_FAILURE() << "container " << id << " is not listed: " << s.error_message();
    return "";
  }
  const auto& labels = listed.containers(0).labels();
  const auto it = labels.find("dxshim.io/devices");
  return it == labels.end() ? "" : it->second;
}

v1::ContainerConfig BusyboxRunning(const std::string& name, const std::string& script,
                                   unsigned attempt) {
  auto c = SleepingBusybox(name);
  c.mutable_metadata()->set_attempt(attempt);
  c.clear_command();
  c.clear_args();
  for (const char* arg : {"/bin/sh", "-c"}) c.add_command(arg);
  c.add_command(script);
  c.set_log_path(name + "-" + std::to_string(attempt) + ".log");
  return c;
}

}  // namespace dxshim::test
