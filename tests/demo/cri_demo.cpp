// The demo's CRI client: runs pods the way kubelet does, through whatever endpoint it is given
// (dxshim in the demo), and prints each call and its answer. The first pod asks for a GPU with
// the dxshim.io/gpu annotation and mounts a file of its own; the container shows what it sees.
// A second GPU pod then finds the only GPU taken. With --memory, three pods ask for 6Gi each of
// the demo's one 16Gi GPU (dxshim.io/gpu-memory): two share it, the third does not fit; given
// dxshim's metrics address, it then shows which pod is on which GPU as Prometheus would see it.
//
// usage: cri_demo SOCKET WORK_DIR DEVICE_PATH RUNTIME_FILE_IN_CONTAINER
//        cri_demo --memory SOCKET WORK_DIR [METRICS_HOST:PORT]
#include <google/protobuf/text_format.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cri_client.h"
#include "tests/support/http_get.h"

namespace {

namespace v1 = runtime::v1;
using dxshim::test::Deadline;

std::string Text(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.PrintToString(m, &out);
  return out;
}

bool Check(const char* what, const grpc::Status& s, const google::protobuf::Message& response) {
  if (!s.ok()) {
    std::printf("  %-16s FAILED: %s (code %d)\n", what, s.error_message().c_str(),
                static_cast<int>(s.error_code()));
    return false;
  }
  std::printf("  %-16s ok  %s\n", what, Text(response).substr(0, 160).c_str());
  return true;
}

// What dxshim told a running container: the first part of its explanation (what was reserved
// and what was free), the label that records the reservation and, from inside, its
// DXSHIM_GPU_MEMORY_BYTES.
bool ShowReservation(dxshim::test::CriClient& cri, const std::string& id) {
  v1::ContainerStatusRequest request;
  request.set_container_id(id);
  v1::ContainerStatusResponse status;
  v1::ExecSyncResponse out;
  if (!cri.runtime->ContainerStatus(Deadline(std::chrono::seconds(60)).get(), request, &status)
           .ok() ||
      !cri.Exec(id, "echo $DXSHIM_GPU_MEMORY_BYTES", &out).ok()) {
    return false;
  }
  const auto& labels = status.status().labels();
  const auto recorded = labels.find("dxshim.io/gpu-memory");
  const auto& annotations = status.status().annotations();
  const auto why = annotations.find("dxshim.io/explanation");
  std::string explanation = why == annotations.end() ? "(no explanation)" : why->second;
  explanation = explanation.substr(0, explanation.find("; spread over"));
  std::string budget = out.stdout_data();
  if (!budget.empty() && budget.back() == '\n') budget.pop_back();
  std::printf("ok  %s\n    label dxshim.io/gpu-memory=%s, inside DXSHIM_GPU_MEMORY_BYTES=%s\n",
              explanation.c_str(), recorded == labels.end() ? "(none)" : recorded->second.c_str(),
              budget.c_str());
  return true;
}

// The lines of dxshim's /metrics at `metrics` that say which pod holds which GPU.
void ShowHolders(const std::string& metrics) {
  const auto scrape = dxshim::test::HttpGet(metrics, "/metrics");
  std::printf(
      "  GET /metrics: who holds the GPU (deploy/monitoring/ joins this with "
      "windows_exporter on node and luid)\n");
  std::istringstream lines(scrape.body);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("dxshim_container_gpu_info{") ||
        line.starts_with("dxshim_pod_gpu_memory_reserved_bytes{")) {
      std::printf("    %s\n", line.c_str());
    }
  }
}

// Three pods asking for 6Gi of GPU memory each, one after the other: the first two share the
// 16Gi GPU, each told what it reserved; the third does not fit next to them (RESOURCE_EXHAUSTED).
int ShareByMemory(const std::string& socket, const std::string& work, const std::string& metrics) {
  dxshim::test::CriClient cri(socket);
  std::printf("  pod annotation   dxshim.io/gpu-memory: 6Gi (three pods, one after the other)\n");
  std::vector<std::string> pods;
  bool ok = true;
  const std::string names[] = {"memory-a", "memory-b", "memory-c"};
  for (const auto& name : names) {
    const bool fits = &name != &names[2];
    v1::RunPodSandboxRequest run;
    *run.mutable_config() = dxshim::test::HostNetworkPod(name, "uid-" + name, work + "/logs");
    (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu-memory"] = "6Gi";
    v1::RunPodSandboxResponse pod;
    const auto ran =
        cri.runtime->RunPodSandbox(Deadline(std::chrono::seconds(60)).get(), run, &pod);
    std::string id;
    const auto created = ran.ok() ? cri.CreateAndStart(pod.pod_sandbox_id(), run.config(),
                                                       dxshim::test::SleepingBusybox("app"), &id)
                                  : ran;
    if (ran.ok()) pods.push_back(pod.pod_sandbox_id());
    std::printf("  %-16s ", (name + ":").c_str());
    if (fits) {
      if (!created.ok() || !ShowReservation(cri, id)) {
        std::printf("FAILED: %s\n", created.error_message().c_str());
        ok = false;
        break;
      }
      continue;
    }
    const bool exhausted = created.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
    std::printf("CreateContainer %s (code %d)\n    %s\n",
                exhausted ? "RESOURCE_EXHAUSTED" : "unexpected",
                static_cast<int>(created.error_code()), created.error_message().c_str());
    ok = exhausted;
  }
  if (ok && !metrics.empty()) ShowHolders(metrics);
  for (const auto& pod : pods) cri.RemovePod(pod);
  std::printf("  %-16s ok  (%zu pods stopped and removed)\n", "RemovePodSandbox", pods.size());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 4 || argc == 5) && std::string(argv[1]) == "--memory") {
    return ShareByMemory(argv[2], argv[3], argc == 5 ? argv[4] : "");
  }
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: cri_demo SOCKET WORK_DIR DEVICE_PATH RUNTIME_FILE\n"
                 "       cri_demo --memory SOCKET WORK_DIR [METRICS_HOST:PORT]\n");
    return 2;
  }
  const std::string socket = argv[1];
  const std::string work = argv[2];
  const std::string device = argv[3];
  const std::string runtime_file = argv[4];
  dxshim::test::CriClient cri(socket);
  const auto timeout = std::chrono::seconds(60);

  v1::VersionRequest version_req;
  version_req.set_version("v1");
  v1::VersionResponse version;
  if (!Check("Version", cri.runtime->Version(Deadline(timeout).get(), version_req, &version),
             version)) {
    return 1;
  }

  std::ofstream(work + "/greeting.txt") << "hello from the node, mounted by containerd\n";
  v1::RunPodSandboxRequest run;
  *run.mutable_config() = dxshim::test::HostNetworkPod("demo", "uid-demo", work + "/logs");
  (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
  std::printf("  pod annotation   dxshim.io/gpu: \"1\"\n");
  v1::RunPodSandboxResponse pod;
  if (!Check("RunPodSandbox", cri.runtime->RunPodSandbox(Deadline(timeout).get(), run, &pod), pod))
    return 1;

  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(pod.pod_sandbox_id());
  *create.mutable_config() = dxshim::test::SleepingBusybox("app");
  auto* mount = create.mutable_config()->add_mounts();
  mount->set_host_path(work + "/greeting.txt");
  mount->set_container_path("/data/greeting.txt");
  mount->set_readonly(true);
  *create.mutable_sandbox_config() = run.config();
  v1::CreateContainerResponse created;
  bool ok = Check("CreateContainer",
                  cri.runtime->CreateContainer(Deadline(timeout).get(), create, &created), created);

  v1::StartContainerRequest start;
  start.set_container_id(created.container_id());
  v1::StartContainerResponse started;
  ok = ok && Check("StartContainer",
                   cri.runtime->StartContainer(Deadline(timeout).get(), start, &started), started);

  v1::ExecSyncRequest exec;
  exec.set_container_id(created.container_id());
  const std::string script = "cat /data/greeting.txt; ls -l " + device + "; cat " + runtime_file +
                             "; env | grep -E '^(CUDA_VISIBLE_DEVICES|DXSHIM_GPU_)' | sort";
  for (const auto& arg : {std::string("sh"), std::string("-c"), script}) exec.add_cmd(arg);
  exec.set_timeout(20);
  v1::ExecSyncResponse out;
  ok = ok && Check("ExecSync", cri.runtime->ExecSync(Deadline(timeout).get(), exec, &out), out);
  if (ok) {
    std::printf("\n  inside the container, `%s` printed:\n", script.c_str());
    std::string line;
    for (char c : out.stdout_data()) {
      if (c != '\n') {
        line += c;
        continue;
      }
      std::printf("    | %s\n", line.c_str());
      line.clear();
    }
    std::printf("\n");
  }

  v1::ListContainersResponse listed;
  ok = ok && Check("ListContainers",
                   cri.runtime->ListContainers(Deadline(timeout).get(), {}, &listed), listed);
  for (const auto& c : listed.containers()) {
    for (const char* key : {"dxshim.io/devices", "dxshim.io/sharing"}) {
      const auto it = c.labels().find(key);
      if (it != c.labels().end()) std::printf("    label %s=%s\n", key, it->second.c_str());
    }
    const auto why = c.annotations().find("dxshim.io/explanation");
    if (why != c.annotations().end()) {
      std::printf("    annotation dxshim.io/explanation=%s\n", why->second.c_str());
    }
  }

  // A second pod asks for a GPU: the only one is taken (max-containers-per-device: 1).
  v1::RunPodSandboxRequest run2;
  *run2.mutable_config() = dxshim::test::HostNetworkPod("demo-2", "uid-demo-2", work + "/logs");
  (*run2.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
  v1::RunPodSandboxResponse pod2;
  ok = ok && Check("RunPodSandbox",
                   cri.runtime->RunPodSandbox(Deadline(timeout).get(), run2, &pod2), pod2);
  v1::CreateContainerRequest create2 = create;
  create2.set_pod_sandbox_id(pod2.pod_sandbox_id());
  *create2.mutable_sandbox_config() = run2.config();
  v1::CreateContainerResponse created2;
  const auto refused = cri.runtime->CreateContainer(Deadline(timeout).get(), create2, &created2);
  std::printf("  %-16s %s (code %d, as kubelet would show it in the pod's events)\n    %s\n",
              "CreateContainer",
              refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? "RESOURCE_EXHAUSTED"
                                                                           : "unexpected",
              static_cast<int>(refused.error_code()), refused.error_message().c_str());
  ok = ok && refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  cri.RemovePod(pod2.pod_sandbox_id());

  cri.RemovePod(pod.pod_sandbox_id());
  std::printf("  %-16s ok  (pod %s stopped and removed)\n", "RemovePodSandbox",
              pod.pod_sandbox_id().substr(0, 12).c_str());
  return ok ? 0 : 1;
}
