// The demo's CRI client: runs pods the way kubelet does, through whatever endpoint it is given
// (dxshim in the demo), and prints each call and its answer. The first pod asks for a GPU with
// the dxshim.io/gpu annotation and mounts a file of its own; the container shows what it sees.
// A second GPU pod then finds the only GPU taken.
//
// usage: cri_demo SOCKET WORK_DIR DEVICE_PATH RUNTIME_FILE_IN_CONTAINER
#include <google/protobuf/text_format.h>

#include <cstdio>
#include <fstream>

#include "tests/support/cri_client.h"

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: cri_demo SOCKET WORK_DIR DEVICE_PATH RUNTIME_FILE\n");
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
