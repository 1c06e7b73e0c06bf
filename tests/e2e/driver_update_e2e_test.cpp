// End to end through a real containerd (linux target): the inventory's DriverStore folder is
// moved, as a driver update moves it, between two CreateContainers well inside the device
// refresh interval (1 h here). containerd creates a missing mount source as an empty directory
// (Linux and Windows alike), so a stale path would give the container a directory where its
// driver file belongs and leave a junk folder on the host. dxshim must give the second container
// the new folder's file, or refuse naming the file; never create anything under the old folder.
// The "GPU" is a device node this test makes (no GPU exists here; see test_gpu.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/test_gpu.h"

namespace dxshim::test {
namespace {

namespace fs = std::filesystem;

class DriverUpdateTest : public GpuNodeTest {
 protected:
  // What discovery reports after the driver moved to `store`.
  void InventoryPointsAt(const std::string& store) {
    WriteTestGpuInventory(dir_ / "inventory.yaml", {&nodes_[0]}, "e2", dir_ / store);
  }
  std::string FileIn(const std::string& container) {
    const auto out = Exec(container, "cat /usr/lib/dxshim/libdxgpu.so");
    return out.stdout_data();
  }
};

TEST_F(DriverUpdateTest, TheNextContainerGetsTheNewFilesOrAClearError) {
  StartDxshim(4, {"--device-refresh", "3600s"});
  const auto pod_1 = RunPod("before-update", true);
  std::string c1;
  ASSERT_TRUE(CreateAndStart(pod_1, &c1).ok()) << Log();
  EXPECT_EQ(FileIn(c1), "dxshim e2e runtime file\n");

  // The update: a new folder with the new driver's file, the old folder gone.
  fs::rename(dir_ / "store", dir_ / "store-v2");
  std::ofstream(dir_ / "store-v2/libdxgpu.so") << "driver v2\n";
  InventoryPointsAt("store-v2");
  const auto pod_2 = RunPod("after-update", true);
  std::string c2;
  ASSERT_TRUE(CreateAndStart(pod_2, &c2).ok()) << Log();
  EXPECT_EQ(FileIn(c2), "driver v2\n");
  EXPECT_FALSE(fs::exists(dir_ / "store")) << "something was created under the old folder";
  EXPECT_NE(Log().find("vanished from the host"), std::string::npos) << Log();

  // The folder moves again and nothing reports where: refused, naming the file; nothing held.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the re-read limit
  fs::rename(dir_ / "store-v2", dir_ / "store-v3");
  const auto pod_3 = RunPod("moved-again", true);
  std::string c3;
  const auto refused = CreateAndStart(pod_3, &c3);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << Log();
  EXPECT_NE(refused.error_message().find(dir_ / "store-v2/libdxgpu.so"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(fs::exists(dir_ / "store-v2")) << "something was created under the old folder";

  // The driver back where the inventory says: the same pod gets its GPU (the refusal held none:
  // 4 per GPU, 2 taken, so this and one more fit, and the one after does not).
  fs::rename(dir_ / "store-v3", dir_ / "store-v2");
  ASSERT_TRUE(CreateAndStart(pod_3, &c3).ok()) << Log();
  EXPECT_EQ(FileIn(c3), "driver v2\n");
  std::string c4;
  EXPECT_TRUE(CreateAndStart(RunPod("fourth", true), &c4).ok()) << Log();
  std::string c5;
  EXPECT_EQ(CreateAndStart(RunPod("fifth", true), &c5).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

}  // namespace
}  // namespace dxshim::test
