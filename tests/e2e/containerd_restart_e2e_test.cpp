// dxshim outlives its runtime: containerd killed and restarted, or started after dxshim.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;

TEST(ContainerdRestart, CallsFailWithUnavailableDuringTheGapAndRecoverAfter) {
  TempDir dir;
  Containerd containerd;
  DxshimProcess dxshim(dir / "dxshim.sock", containerd.socket(), dir / "dxshim.log");
  CriClient client(dxshim.socket());

  // A pod created before the crash is still there afterwards, seen through the same dxshim.
  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod("survivor", "uid-survivor", dir / "logs");
  v1::RunPodSandboxResponse pod;
  ASSERT_TRUE(
      client.runtime->RunPodSandbox(Deadline(std::chrono::seconds(60)).get(), run, &pod).ok());

  containerd.Kill();
  v1::VersionResponse version;
  const auto during = client.Version(&version, std::chrono::seconds(20));
  EXPECT_EQ(during.error_code(), grpc::StatusCode::UNAVAILABLE) << during.error_message();
  const auto again = client.Version(&version, std::chrono::seconds(20));
  EXPECT_EQ(again.error_code(), grpc::StatusCode::UNAVAILABLE) << again.error_message();

  containerd.Restart();
  const bool recovered =
      WaitFor([&] { return client.Version(&version).ok(); }, std::chrono::seconds(30));
  EXPECT_TRUE(recovered) << dxshim.process().Log();
  EXPECT_EQ(version.runtime_name(), "containerd");

  v1::ListPodSandboxResponse pods;
  ASSERT_TRUE(
      client.runtime->ListPodSandbox(Deadline(std::chrono::seconds(10)).get(), {}, &pods).ok());
  ASSERT_EQ(pods.items_size(), 1);
  EXPECT_EQ(pods.items(0).id(), pod.pod_sandbox_id());
  client.RemovePod(pod.pod_sandbox_id());

  EXPECT_TRUE(dxshim.process().running());
  EXPECT_EQ(dxshim.Stop(), 0);
  const auto log = dxshim.process().Log();
  EXPECT_NE(log.find("unavailable"), std::string::npos) << log;
}

TEST(ContainerdRestart, DxshimListensBeforeContainerdStarts) {
  TempDir dir;
  // Nothing listens on the runtime socket yet.
  const std::string runtime_socket = dir / "not-yet.sock";
  DxshimProcess dxshim(dir / "dxshim.sock", runtime_socket, dir / "dxshim.log");
  CriClient client(dxshim.socket());
  v1::VersionResponse version;
  const auto early = client.Version(&version, std::chrono::seconds(20));
  EXPECT_EQ(early.error_code(), grpc::StatusCode::UNAVAILABLE) << early.error_message();

  // containerd comes up; its socket appears where dxshim was told to look.
  Containerd containerd;
  ASSERT_EQ(::symlink(containerd.socket().c_str(), runtime_socket.c_str()), 0);
  const bool recovered =
      WaitFor([&] { return client.Version(&version).ok(); }, std::chrono::seconds(30));
  EXPECT_TRUE(recovered) << dxshim.process().Log();
  EXPECT_EQ(version.runtime_name(), "containerd");
  EXPECT_EQ(dxshim.Stop(), 0);
}

}  // namespace
}  // namespace dxshim::test
