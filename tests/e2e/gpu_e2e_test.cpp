// End to end through a real containerd with the linux target: a pod that asks for a GPU gets a
// device node and runtime file dxshim injects; one that does not sees neither; the sharing limit
// holds across pods and across dxshim being killed and restarted (the ledger lives in the
// runtime: sandboxes and the containers' labels). The "GPU" is a character device node made by this
// test (mknod 1:3, the same device as /dev/null): no GPU exists here, and containerd/runc handle
// any device node alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/test_gpu.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

using GpuEndToEnd = GpuNodeTest;

TEST_F(GpuEndToEnd, InjectsOnlyWhereAskedEnforcesSharingAndSurvivesRestarts) {
  StartDxshim(1);
  const auto gpu_pod = RunPod("gpu-a", true);
  std::string gpu_container;
  ASSERT_TRUE(CreateAndStart(gpu_pod, &gpu_container).ok()) << Log();
  auto out = Exec(gpu_container, "cat /usr/lib/dxshim/libdxgpu.so && test -c " + nodes_[0].path() +
                                     " && echo device-present");
  EXPECT_EQ(out.stdout_data(), "dxshim e2e runtime file\ndevice-present\n") << out.stderr_data();
  // The decision is recorded on the container, where a restarted dxshim finds it.
  v1::ListContainersRequest list;
  list.mutable_filter()->set_id(gpu_container);
  v1::ListContainersResponse listed;
  ASSERT_TRUE(client_->runtime->ListContainers(Deadline(seconds(10)).get(), list, &listed).ok());
  ASSERT_EQ(listed.containers_size(), 1);
  EXPECT_EQ(listed.containers(0).labels().at("dxshim.io/devices"), "0000:e2:00.0");
  EXPECT_NE(listed.containers(0).annotations().at("dxshim.io/explanation").find("Test GPU"),
            std::string::npos);

  // A pod that does not ask sees neither the device nor the file.
  const auto plain_pod = RunPod("plain", false);
  std::string plain_container;
  ASSERT_TRUE(CreateAndStart(plain_pod, &plain_container).ok());
  out = Exec(plain_container, "test -e " + nodes_[0].path() +
                                  "; echo $?; test -e /usr/lib/dxshim/libdxgpu.so; echo $?");
  EXPECT_EQ(out.stdout_data(), "1\n1\n");

  // The one slot is taken: a second GPU pod is refused, before and after dxshim is killed.
  const auto second_pod = RunPod("gpu-b", true);
  std::string second_container;
  auto refused = CreateAndStart(second_pod, &second_container);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("in use"), std::string::npos) << refused.error_message();
  KillDxshim();
  StartDxshim(1);
  refused = CreateAndStart(second_pod, &second_container);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << Log();

  // The first pod goes away: the second one gets the GPU.
  client_->RemovePod(gpu_pod);
  ASSERT_TRUE(CreateAndStart(second_pod, &second_container).ok()) << Log();
  out = Exec(second_container, "cat /usr/lib/dxshim/libdxgpu.so");
  EXPECT_EQ(out.stdout_data(), "dxshim e2e runtime file\n");

  // Killed again, restarted with two containers per device: one more pod fits, not two.
  KillDxshim();
  StartDxshim(2);
  const auto third_pod = RunPod("gpu-c", true);
  std::string third_container;
  EXPECT_TRUE(CreateAndStart(third_pod, &third_container).ok()) << Log();
  const auto fourth_pod = RunPod("gpu-d", true);
  std::string fourth_container;
  refused = CreateAndStart(fourth_pod, &fourth_container);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << Log();

  for (const auto& pod : {plain_pod, second_pod, third_pod, fourth_pod}) client_->RemovePod(pod);
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
}

TEST_F(GpuEndToEnd, ThirtyTwoRacingCreateContainersForFourSlots) {
  WriteInventory(2);
  StartDxshim(2);  // 2 devices x 2 pods = 4 slots
  std::vector<std::string> pods;
  for (int i = 0; i < 32; ++i) pods.push_back(RunPod("race-" + std::to_string(i), true));
  std::vector<grpc::Status> results(pods.size());
  std::vector<std::string> ids(pods.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    threads.emplace_back([&, i] {
      v1::CreateContainerRequest create;
      create.set_pod_sandbox_id(pods[i]);
      *create.mutable_config() = SleepingBusybox("app");
      *create.mutable_sandbox_config() = configs_[pods[i]];
      v1::CreateContainerResponse created;
      results[i] =
          client_->runtime->CreateContainer(Deadline(seconds(120)).get(), create, &created);
      ids[i] = created.container_id();
    });
  }
  for (auto& t : threads) t.join();
  int ok = 0;
  int exhausted = 0;
  std::map<std::string, int> per_device;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) {
      ++ok;
      v1::ListContainersRequest list;
      list.mutable_filter()->set_id(ids[i]);
      v1::ListContainersResponse listed;
      ASSERT_TRUE(
          client_->runtime->ListContainers(Deadline(seconds(10)).get(), list, &listed).ok());
      ++per_device[listed.containers(0).labels().at("dxshim.io/devices")];
    } else if (results[i].error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
    } else {
      ADD_FAILURE() << results[i].error_message();
    }
  }
  EXPECT_EQ(ok, 4) << Log();
  EXPECT_EQ(exhausted, 28);
  EXPECT_EQ(per_device, (std::map<std::string, int>{{"0000:e2:00.0", 2}, {"0000:e2:00.1", 2}}));
  for (const auto& pod : pods) client_->RemovePod(pod);
}

// A DriverStore folder whose name has non-ASCII characters (ñ, €, 漢): its UTF-8 bytes reach
// containerd unchanged in the mount's host_path (containerd 2.2 and later refuse a CRI string that
// is not UTF-8; this containerd takes the request and mounts the file), and the container reads
// the driver's file.
TEST_F(GpuEndToEnd, ANonAsciiDriverStoreFolderIsMountedAsItsUtf8Bytes) {
  const std::string folder = "store-\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2";
  std::filesystem::create_directories(dir_ / folder);
  std::ofstream(dir_ / (folder + "/libdxgpu.so")) << "non-ASCII DriverStore folder\n";
  WriteTestGpuInventory(dir_ / "inventory.yaml", {&nodes_[0]}, "e2", dir_ / folder);
  StartDxshim(1);
  const auto pod = RunPod("non-ascii-store", true);
  std::string id;
  ASSERT_TRUE(CreateAndStart(pod, &id).ok()) << Log();
  EXPECT_EQ(Exec(id, "cat /usr/lib/dxshim/libdxgpu.so").stdout_data(),
            "non-ASCII DriverStore folder\n");
  v1::ContainerStatusRequest status;
  status.set_container_id(id);
  v1::ContainerStatusResponse described;
  ASSERT_TRUE(
      client_->runtime->ContainerStatus(Deadline(seconds(10)).get(), status, &described).ok());
  std::vector<std::string> sources;
  for (const auto& m : described.status().mounts()) sources.push_back(m.host_path());
  EXPECT_NE(std::find(sources.begin(), sources.end(), dir_ / (folder + "/libdxgpu.so")),
            sources.end())
      << testing::PrintToString(sources);
  client_->RemovePod(pod);
}

TEST_F(GpuEndToEnd, AFailedCreateContainerKeepsNothing) {
  StartDxshim(1);
  const auto pod = RunPod("bad-image", true);
  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(pod);
  *create.mutable_config() = SleepingBusybox("app");
  create.mutable_config()->mutable_image()->set_image("dxshim.test/no-such-image:1");
  *create.mutable_sandbox_config() = configs_[pod];
  v1::CreateContainerResponse created;
  const auto failed =
      client_->runtime->CreateContainer(Deadline(seconds(60)).get(), create, &created);
  ASSERT_FALSE(failed.ok());  // containerd refuses: the image does not exist
  // The reservation was released: another pod gets the only slot.
  const auto other = RunPod("good", true);
  std::string id;
  EXPECT_TRUE(CreateAndStart(other, &id).ok()) << Log();
  for (const auto& p : {pod, other}) client_->RemovePod(p);
}

}  // namespace
}  // namespace dxshim::test
