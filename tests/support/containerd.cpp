#include "tests/support/containerd.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "runtime/v1/api.grpc.pb.h"
#include "shim/proxy/unix_socket.h"
#include "tests/support/cri_client.h"
#include "tests/support/loopback_impostor.h"

namespace dxshim::test {

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(address.sin_port);
}

Containerd::Containerd(Listen listen) : socket_(dir_ / "containerd.sock") {
  // A free port can be taken by another test between FreeLoopbackPort() and containerd's bind:
  // then containerd exits ("address already in use") and another port is tried.
  for (int attempt = 1;; ++attempt) {
    if (listen == Listen::kUnixAndTcp) {
      tcp_address_ = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
    }
    Process config({DXSHIM_SCRIPTS_DIR "/containerd-config.sh", dir_.path(), tcp_address_},
                   dir_ / "config.log");
    if (config.Wait(std::chrono::seconds(30)) != 0) {
      throw std::runtime_error("containerd-config.sh failed:\n" + config.Log());
    }
    try {
      Launch();
      break;
    } catch (const std::runtime_error&) {
      const bool port_taken = listen == Listen::kUnixAndTcp &&
                              Log().find("address already in use") != std::string::npos;
      if (!port_taken || attempt == 3) throw;
    }
  }
  ImportImages();
}

Containerd::~Containerd() {
  try {
    if (process_ && process_->running()) RemoveAllPods();
  } catch (...) {
  }
  if (process_) {
    process_->Signal(SIGTERM);
    if (!process_->Wait(std::chrono::seconds(15))) process_->Signal(SIGKILL);
    process_->Wait(std::chrono::seconds(5));
  }
  KillShims();
  UnmountAll();
}

void Containerd::KillShims() {
  // A shim outlives containerd by design (Kill, Stop): one whose pod a test did not remove would
  // run on after the test, and so would its containers. Ours are the shims started with an address
  // in our directory; their containers are their descendants (a shim is its containers'
  // subreaper), killed first: a container whose shim is gone would be reparented to init.
  std::error_code ec;
  std::set<int> shims;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string argument;
    bool shim = false;
    bool ours = false;
    for (bool first = true; std::getline(in, argument, '\0'); first = false) {
      if (first) shim = argument.find("containerd-shim") != std::string::npos;
      if (argument.rfind(dir_.path() + "/", 0) == 0) ours = true;
    }
    if (shim && ours) shims.insert(std::stoi(pid));
  }
  for (const int shim : shims) {
    const auto tree = ProcessTree(shim);  // the shim first, then its descendants
    for (auto pid = tree.rbegin(); pid != tree.rend(); ++pid) ::kill(*pid, SIGKILL);
  }
}

void Containerd::Launch() {
  process_ = std::make_unique<Process>(
      std::vector<std::string>{"containerd", "--config", dir_ / "config.toml"},
      dir_ / "containerd.log");
  // Dial only once the socket answers: a gRPC channel that failed to connect waits out its
  // reconnect backoff before it tries again.
  WaitFor([&] { return !process_->running() || UnixSocketAnswers(socket_); },
          std::chrono::seconds(30));
  CriClient client(socket_);
  const bool up = WaitFor(
      [&] {
        if (!process_->running()) return true;
        runtime::v1::VersionResponse response;
        return client.Version(&response).ok();
      },
      std::chrono::seconds(30));
  if (!up || !process_->running()) {
    throw std::runtime_error("containerd did not start; its log:\n" + Log());
  }
}

void Containerd::ImportImages() {
  for (const char* image : {"pause.tar", "busybox.tar"}) {
    Process import({"ctr", "--address", socket_, "--namespace", "k8s.io", "images", "import",
                    std::string(DXSHIM_TEST_IMAGES_DIR) + "/" + image},
                   dir_ / "import.log");
    const auto code = import.Wait(std::chrono::seconds(60));
    if (code != 0) throw std::runtime_error("ctr images import failed:\n" + import.Log());
  }
}

void Containerd::Kill() {
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
}

void Containerd::Stop() {
  process_->Signal(SIGTERM);
  if (!process_->Wait(std::chrono::seconds(15))) Kill();
}

void Containerd::Restart() { Launch(); }

std::string Containerd::Log() const {
  std::ifstream in(dir_ / "containerd.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Containerd::RemoveAllPods() {
  CriClient client(socket_);
  grpc::ClientContext ctx;
  runtime::v1::ListPodSandboxResponse pods;
  if (!client.runtime->ListPodSandbox(&ctx, {}, &pods).ok()) return;
  for (const auto& pod : pods.items()) {
    client.RemovePod(pod.id());
  }
}

void Containerd::UnmountAll() {
  // Whatever the runtime left mounted below our directory (rootfs, shm), deepest first.
  std::vector<std::string> mounts;
  std::ifstream in("/proc/self/mounts");
  std::string device, target, rest;
  while (in >> device >> target && std::getline(in, rest)) {
    if (target.rfind(dir_.path() + "/", 0) == 0) mounts.push_back(target);
  }
  std::sort(mounts.rbegin(), mounts.rend());
  for (const auto& m : mounts) ::umount2(m.c_str(), MNT_DETACH);
}

}  // namespace dxshim::test
