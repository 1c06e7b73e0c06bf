// The takeover `dxshim install` makes on AKS-style nodes (shim/install/install_plan.h), end to end
// with the real dxshim.exe under wine and a real containerd: dxshim.exe serves the pipe kubelet
// already uses, \\.\pipe\containerd-containerd, and relays to containerd, which after a
// takeover listens elsewhere. Everything on the node that used containerd's pipe now goes
// through dxshim: kubelet's CRI calls, and ctr's native API (namespaces, images, the calls AKS's
// cleanupnetwork.ps1 makes), which must come back exactly as containerd answers them directly.
//   CRI client / ctr (Linux) --unix socket (socat)--> --TCP--> pipe-relay.exe
//     --\\.\pipe\containerd-containerd--> dxshim.exe --tcp://--> containerd
// containerd cannot run under wine, so its moved pipe is stood in for by a loopback TCP port
// forwarded to its unix socket (socat): like the pipe, and unlike containerd's own TCP endpoint
// (which serves CRI only), it serves every service. node_install_aks_test.sh checks that install
// writes the moved pipe into containerd's config.toml and dxshim's listen/runtime, on wine's real
// service manager.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/process.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wine_dxshim.h"

namespace dxshim::test {
namespace {

using std::chrono::seconds;

// A loopback port nothing listens on now.
int UnusedPort() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(s);
  return ntohs(address.sin_port);
}

// `ctr --address SOCKET ARGS...`: exit code and output.
std::pair<int, std::string> Ctr(const TempDir& dir, const std::string& socket,
                                const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> argv = {"ctr", "--address", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  Process ctr(argv, dir / (name + ".log"));
  const auto code = ctr.Wait(seconds(60));
  return {code.value_or(-1), ctr.Log()};
}

TEST(WindowsTakeover, KubeletsPipeReachesContainerdThroughDxshimForEveryService) {
  TempDir dir;
  Containerd containerd;
  // containerd's moved pipe: every service of containerd's socket, on a loopback port.
  const int moved = UnusedPort();
  Process moved_pipe(
      {"socat", "TCP-LISTEN:" + std::to_string(moved) + ",bind=127.0.0.1,reuseaddr,fork",
       "UNIX-CONNECT:" + containerd.socket()},
      dir / "moved-pipe.log");
  WineDxshim dxshim(
      DXSHIM_WINDOWS_EXE, DXSHIM_PIPE_RELAY_EXE, "tcp://127.0.0.1:" + std::to_string(moved),
      {"--device-source",
       "inventory:" DXSHIM_SOURCE_DIR "/deploy/examples/inventories/nvidia-t4.yaml", "--target",
       "linux", "--linux-system32-path", "/usr/lib/dxshim", "--device-plugin", "false"},
      "containerd-containerd");
  ASSERT_TRUE(dxshim.running()) << dxshim.Log();
  EXPECT_NE(dxshim.Log().find("listening on npipe://./pipe/containerd-containerd"),
            std::string::npos)
      << dxshim.Log();

  // Kubelet's CRI calls on the old pipe name.
  CriClient cri(DialTarget(dxshim.pipe_target()));
  runtime::v1::VersionResponse version;
  const auto status = cri.runtime->Version(Deadline(seconds(30)).get(), {}, &version);
  ASSERT_TRUE(status.ok()) << status.error_message() << dxshim.Log();
  EXPECT_EQ(version.runtime_name(), "containerd");

  // ctr's native API through the same pipe: a unix socket in front of the pipe's forwarder.
  const std::string socket = dir / "ctr.sock";
  Process socat({"socat", "UNIX-LISTEN:" + socket + ",fork", "TCP:" + dxshim.pipe_target()},
                dir / "socat.log");
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(socket); }, seconds(10))) << socat.Log();
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"namespaces", {"namespaces", "ls"}},
           {"images", {"--namespace", "k8s.io", "images", "ls"}},
           {"containers", {"--namespace", "k8s.io", "containers", "ls"}},
           {"version", {"version"}}}) {
    const auto direct = Ctr(dir, containerd.socket(), args, name + "-direct");
    const auto through = Ctr(dir, socket, args, name + "-through-dxshim");
    ASSERT_EQ(direct.first, 0) << direct.second;
    EXPECT_EQ(through.first, 0) << through.second << dxshim.Log();
    EXPECT_EQ(through.second, direct.second) << "ctr " << name << " through dxshim";
  }
  const auto images = Ctr(dir, socket, {"--namespace", "k8s.io", "images", "ls", "-q"}, "q");
  EXPECT_NE(images.second.find("pause"), std::string::npos)
      << "the test images are listed through dxshim: " << images.second;
}

}  // namespace
}  // namespace dxshim::test
