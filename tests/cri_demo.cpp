// The demo's CRI client: runs a pod the way kubelet does, through whatever endpoint it is given
// (dxshim in the demo), and prints each call and its answer.
//
// usage: cri_demo SOCKET WORK_DIR
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
  if (argc != 3) {
    std::fprintf(stderr, "usage: cri_demo SOCKET WORK_DIR\n");
    return 2;
  }
  const std::string socket = argv[1];
  const std::string work = argv[2];
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
  for (const char* arg : {"sh", "-c", "cat /data/greeting.txt; ls /data"}) exec.add_cmd(arg);
  exec.set_timeout(20);
  v1::ExecSyncResponse out;
  ok = ok && Check("ExecSync", cri.runtime->ExecSync(Deadline(timeout).get(), exec, &out), out);
  if (ok) {
    std::printf("\n  inside the container, `cat /data/greeting.txt; ls /data` printed:\n");
    std::string line;
    for (char c : out.stdout()) {
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

  cri.RemovePod(pod.pod_sandbox_id());
  std::printf("  %-16s ok  (pod %s stopped and removed)\n", "RemovePodSandbox",
              pod.pod_sandbox_id().substr(0, 12).c_str());
  return ok ? 0 : 1;
}
