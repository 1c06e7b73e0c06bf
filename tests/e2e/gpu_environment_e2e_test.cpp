// The environment that names a container's GPUs, as the container sees it, through a real
// containerd (linux target, the tests' stand-in for Windows: the same variables): `env` run in the
// container shows the GPU it was given, in its first container, in the container kubelet
// re-creates after a crash, and in one created after dxshim itself was killed and restarted; a
// pod's own CUDA_VISIBLE_DEVICES stays. The GPU is a device node the test makes (test_gpu.h),
// listed with an NVML-form UUID: no GPU exists here.
#include <gtest/gtest.h>

#include "tests/support/gpu_node.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;

const char kShowEnv[] = "env | grep -E '^(CUDA_VISIBLE_DEVICES|DXSHIM_GPU_)' | sort";

class GpuEnvironmentEndToEnd : public GpuNodeTest {
 protected:
  void SetUp() override { StartDxshim(1, {"--resync-interval", "1s"}); }

  // What the first test GPU's container must see (the inventory of test_gpu.cpp, bus "e2"; its
  // 16Gi all the budget of the one pod it may serve, and all of its total).
  std::string Expected(const std::string& cuda = "GPU-00000000-0000-4000-8000-0000e2e20000") {
    return "CUDA_VISIBLE_DEVICES=" + cuda + "\nDXSHIM_GPU_LOCATION_PATHS=" + nodes_[0].path() +
           "\nDXSHIM_GPU_LUIDS=0x00000000_0x000E2E20\nDXSHIM_GPU_MEMORY_BYTES=17179869184"
           "\nDXSHIM_GPU_MEMORY_TOTAL_BYTES=17179869184\nDXSHIM_GPU_VENDOR_IDS=0x10de\n";
  }

  std::string EnvOf(const std::string& id) {
    const auto out = Exec(id, kShowEnv);
    EXPECT_EQ(out.exit_code(), 0) << out.stderr_data();
    return out.stdout_data();
  }
};

TEST_F(GpuEnvironmentEndToEnd, ThroughACrashLoopAndADxshimRestart) {
  const auto pod = RunPod("env-a", true);
  // The first container crashes at once; what it saw is in its log.
  std::string crashed;
  ASSERT_TRUE(
      CreateAndStart(pod, BusyboxRunning("app", std::string(kShowEnv) + "; exit 1"), &crashed).ok())
      << Log();
  WaitUntilExited(crashed);
  // Kubelet re-creates it (attempt 1, same sandbox), here one that stays up.
  std::string second;
  ASSERT_TRUE(CreateAndStart(pod, BusyboxRunning("app", "exec sleep 3600", 1), &second).ok())
      << Log();
  EXPECT_EQ(EnvOf(second), Expected()) << Log();
  EXPECT_NE(Log().find("env CUDA_VISIBLE_DEVICES, DXSHIM_GPU_LUIDS, DXSHIM_GPU_LOCATION_PATHS, "
                       "DXSHIM_GPU_VENDOR_IDS"),
            std::string::npos)
      << Log();

  // dxshim killed and started again: the ledger comes back from containerd, and the pod's next
  // container is told the same GPU.
  KillDxshim();
  StartDxshim(1, {"--resync-interval", "1s"});
  std::string third;
  ASSERT_TRUE(CreateAndStart(pod, BusyboxRunning("sidecar", "exec sleep 3600", 0), &third).ok())
      << Log();
  EXPECT_EQ(DevicesOf(third), DevicesOf(second));
  EXPECT_EQ(EnvOf(third), Expected()) << Log();
}

TEST_F(GpuEnvironmentEndToEnd, ThePodsOwnCudaVisibleDevicesStays) {
  const auto pod = RunPod("env-own", true);
  auto config = BusyboxRunning("app", "exec sleep 3600");
  auto* own = config.add_envs();
  own->set_key("CUDA_VISIBLE_DEVICES");
  own->set_value("0");
  std::string id;
  ASSERT_TRUE(CreateAndStart(pod, config, &id).ok()) << Log();
  EXPECT_EQ(EnvOf(id), Expected("0")) << Log();
  EXPECT_NE(Log().find("kept the pod's own CUDA_VISIBLE_DEVICES"), std::string::npos) << Log();
}

TEST_F(GpuEnvironmentEndToEnd, AContainerWithoutGpuGetsNone) {
  const auto pod = RunPod("env-none", false);
  std::string id;
  ASSERT_TRUE(CreateAndStart(pod, &id).ok()) << Log();
  const auto out = Exec(id, kShowEnv);
  EXPECT_EQ(out.stdout_data(), "");
}

}  // namespace
}  // namespace dxshim::test
