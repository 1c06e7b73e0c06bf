// A pod holds its GPU while its sandbox lives, through a real containerd (linux target, one test
// GPU shared by one pod at most, a resync every second): a crash-looping container, an init
// container that has exited, and dxshim killed between a crash and the restart all leave the pod
// its GPU, and another pod is refused meanwhile; a sandbox stopped directly through containerd,
// which dxshim never sees, frees the GPU at the next resync. The GPU is a device node the test
// makes (see test_gpu.h): no GPU exists here.
#include <gtest/gtest.h>

#include "tests/support/gpu_node.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

class PodHold : public GpuNodeTest {
 protected:
  void SetUp() override { StartDxshim(1, {"--resync-interval", "1s"}); }

  // A pod asking for a GPU whose first container exits at once, as a crash-looping app's does
  // (or an init container's); its sandbox stays up, as kubelet keeps it. Returns the pod.
  std::string PodWhoseContainerExited(const std::string& name, const std::string& container,
                                      const std::string& script) {
    auto pod = RunPod(name, true);
    std::string id;
    EXPECT_TRUE(CreateAndStart(pod, BusyboxRunning(container, script), &id).ok()) << Log();
    WaitUntilExited(id);
    first_devices_ = DevicesOf(id);
    EXPECT_EQ(first_devices_, "0000:e2:00.0");
    return pod;
  }

  // Another pod asking for a GPU is refused: the one GPU is still held.
  void AnotherPodIsRefused(const std::string& name) {
    const auto other = RunPod(name, true);
    std::string id;
    const auto refused = CreateAndStart(other, &id);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << refused.error_message() << "\n"
        << Log();
    EXPECT_NE(refused.error_message().find("1/1 pods"), std::string::npos)
        << refused.error_message();
  }

  // The pod's next container gets the same GPU, and sees the device and the runtime file.
  void NextContainerGetsTheSameGpu(const std::string& pod, const v1::ContainerConfig& config) {
    std::string id;
    const auto created = CreateAndStart(pod, config, &id);
    ASSERT_TRUE(created.ok()) << created.error_message() << "\n" << Log();
    EXPECT_EQ(DevicesOf(id), first_devices_);
    const auto out = Exec(id, "cat /usr/lib/dxshim/libdxgpu.so && test -c " + nodes_[0].path() +
                                  " && echo device-present");
    EXPECT_EQ(out.stdout_data(), "dxshim e2e runtime file\ndevice-present\n") << out.stderr_data();
  }

  std::string first_devices_;
};

TEST_F(PodHold, ACrashLoopingPodKeepsItsGpu) {
  const auto pod = PodWhoseContainerExited("crash-a", "app", "exit 1");
  WaitForResyncs(3);  // the resyncs that used to free the GPU of an exited container
  AnotherPodIsRefused("gpu-b");
  // Kubelet re-creates the container (attempt 1, same sandbox), here one that stays up.
  auto restarted = BusyboxRunning("app", "exec sleep 3600", 1);
  NextContainerGetsTheSameGpu(pod, restarted);
  WaitForResyncs(1);
  AnotherPodIsRefused("gpu-c");
}

TEST_F(PodHold, AnInitContainerThatExitedLeavesTheGpuToTheAppContainer) {
  const auto pod = PodWhoseContainerExited("init-a", "warm-cache", "exit 0");
  WaitForResyncs(2);
  AnotherPodIsRefused("gpu-b");
  NextContainerGetsTheSameGpu(pod, SleepingBusybox("app"));
}

TEST_F(PodHold, APodThatCompletedHoldsItsGpuUntilItsSandboxIsStopped) {
  const auto pod = PodWhoseContainerExited("done-a", "job", "exit 0");
  WaitForResyncs(2);
  AnotherPodIsRefused("gpu-b");
  // Kubelet stops a finished pod's sandbox: through dxshim, the GPU is free at once.
  v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(pod);
  v1::StopPodSandboxResponse stopped;
  ASSERT_TRUE(client_->runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped).ok());
  const auto next = RunPod("gpu-c", true);
  std::string id;
  EXPECT_TRUE(CreateAndStart(next, &id).ok()) << Log();
}

TEST_F(PodHold, ASandboxStoppedBehindDxshimsBackFreesTheGpuAtTheNextResync) {
  const auto holder = RunPod("gpu-a", true);
  std::string id;
  ASSERT_TRUE(CreateAndStart(holder, &id).ok()) << Log();
  AnotherPodIsRefused("gpu-b");
  // Stopped directly through containerd's own socket: dxshim never sees StopPodSandbox.
  CriClient direct(containerd_.socket());
  v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(holder);
  v1::StopPodSandboxResponse stopped;
  ASSERT_TRUE(direct.runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped).ok());
  WaitForResyncs(2);
  EXPECT_NE(
      Log().find("ledger: sandbox " + holder + " is stopped or gone: GPU(s) 0000:e2:00.0 free"),
      std::string::npos)
      << Log();
  const auto next = RunPod("gpu-c", true);
  EXPECT_TRUE(CreateAndStart(next, &id).ok()) << Log();
  EXPECT_EQ(DevicesOf(id), "0000:e2:00.0");
}

TEST_F(PodHold, DxshimKilledBetweenACrashAndTheRestartKeepsThePodsHold) {
  const auto pod = PodWhoseContainerExited("crash-a", "app", "exit 1");
  KillDxshim();
  StartDxshim(1, {"--resync-interval", "1s"});  // rebuilds the ledger from containerd alone
  EXPECT_NE(Log().find("ledger: 1 pod(s) hold GPUs"), std::string::npos) << Log();
  AnotherPodIsRefused("gpu-b");
  NextContainerGetsTheSameGpu(pod, BusyboxRunning("app", "exec sleep 3600", 1));
}

}  // namespace
}  // namespace dxshim::test
