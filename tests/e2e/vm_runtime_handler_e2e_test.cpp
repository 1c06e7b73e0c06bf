// End to end through a real containerd (linux target) with a second runc runtime, handler
// "dxshim-test-vm" (scripts/containerd-config.sh), standing in for a handler that runs pods in
// VMs: on Windows, containerd's runhcs-wcow-hypervisor, to whose Hyper-V containers hcsshim gives
// no GPUs. Listed in vm-runtime-handlers, its GPU pods are refused with FAILED_PRECONDITION and
// hold nothing; a device another plugin put in is left as it is; the same pod under the default
// handler gets a GPU; and after dxshim restarts (handlers then come from ListPodSandbox), or for
// a sandbox made behind its back, the same. The "GPU" is a device node (see test_gpu.h).
#include <gtest/gtest.h>

#include "tests/support/gpu_node.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

constexpr char kVm[] = "dxshim-test-vm";

using VmRuntimeHandlerTest = GpuNodeTest;

TEST_F(VmRuntimeHandlerTest, GpuPodsInVmHandlersAreRefusedAndHoldNothing) {
  const std::vector<std::string> flags = {"--vm-runtime-handlers", kVm};
  StartDxshim(1, flags);
  const auto vm_pod = RunPod("in-vm", true, kVm);
  std::string id;
  auto refused = CreateAndStart(vm_pod, &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << Log();
  EXPECT_NE(
      refused.error_message().find(std::string("'") + kVm + "' runs pods in virtual machines"),
      std::string::npos)
      << refused.error_message();

  // The VM handler itself works: a pod there without a GPU request runs as usual.
  const auto plain_vm_pod = RunPod("plain-in-vm", false, kVm);
  std::string plain;
  ASSERT_TRUE(CreateAndStart(plain_vm_pod, &plain).ok()) << Log();

  // Another plugin's device in a VM pod: kept exactly, no runtime file, no dxshim label.
  auto with_device = SleepingBusybox("other-plugin");
  auto* device = with_device.add_devices();
  device->set_host_path(nodes_[0].path());
  device->set_container_path(nodes_[0].path());
  device->set_permissions("rw");
  std::string assigned;
  ASSERT_TRUE(CreateAndStart(plain_vm_pod, with_device, &assigned).ok()) << Log();
  const auto seen = Exec(assigned, "test -c " + nodes_[0].path() + "; echo $?; test -e " +
                                       "/usr/lib/dxshim/libdxgpu.so; echo $?");
  EXPECT_EQ(seen.stdout_data(), "0\n1\n");
  EXPECT_EQ(DevicesOf(assigned), "");
  EXPECT_NE(Log().find("left as they are"), std::string::npos) << Log();

  // Nothing was held: the one slot goes to a pod under the default handler.
  const auto gpu_pod = RunPod("default-handler", true);
  std::string gpu;
  ASSERT_TRUE(CreateAndStart(gpu_pod, &gpu).ok()) << Log();
  EXPECT_EQ(DevicesOf(gpu), "0000:e2:00.0");
  client_->RemovePod(gpu_pod);

  // dxshim restarts: it learns the handler from the runtime's listing, and refuses the same way.
  KillDxshim();
  StartDxshim(1, flags);
  refused = CreateAndStart(vm_pod, &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << Log();

  // A sandbox made directly in containerd: unknown at first (UNAVAILABLE, retry), then refused
  // once a resync (kicked by that answer) has listed it.
  CriClient direct(containerd_.socket());
  const auto behind = RunPod("behind-dxshims-back", true, kVm, &direct);
  grpc::Status status;
  const bool settled = WaitFor(
      [&] {
        status = CreateAndStart(behind, &id);
        return status.error_code() != grpc::StatusCode::UNAVAILABLE;
      },
      seconds(20));
  EXPECT_TRUE(settled) << status.error_message();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  // And under the default handler after the restart, a GPU pod still runs.
  std::string again;
  EXPECT_TRUE(CreateAndStart(RunPod("default-again", true), &again).ok()) << Log();
}

}  // namespace
}  // namespace dxshim::test
