// doctor's GPU lines on a real inventory file and real runtime files (the inventory stands in for
// discovery, as everywhere on Linux): every file there is ok; one of two gone from a DriverStore
// folder that is there is a warning (CreateContainer skips a file a driver never shipped); all of
// them gone, or the folder itself, fails naming the files and the folder; no GPU fails.
#include "shim/doctor/gpu_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace dxshim::doctor {
namespace {

class GpuCheck : public testing::Test {
 protected:
  GpuCheck() {
    std::filesystem::create_directories(dir_ / "store");
    for (const char* name : {"gpu64.dll", "gpu32.dll"}) {
      std::ofstream(dir_ / (std::string("store/") + name)) << "x";
    }
    std::ofstream(dir_ / "inventory.yaml") << R"(devices:
  - id: '0000:e7:00.0'
    luid: 0x00000000_0x000E7E20
    locationPath: 'PCIROOT(0)#PCI(0300)'
    description: NVIDIA Test GPU
    vendor: NVIDIA
    vendorId: 0x10de
    deviceId: 0x1eb8
    class: display
    dedicatedMemory: 16Gi
    driverVersion: '31.0.15.5222'
    driverStore: ')" << dir_ / "store"
                                           << R"('
    present: true
    runtimeFiles:
      system32:
        - {source: gpu64.dll}
      syswow64:
        - {source: gpu32.dll}
)";
    cfg_.device_source = "inventory:" + dir_ / "inventory.yaml";
    cfg_.target = config::Target::kLinux;  // host paths joined with / on this host
  }

  Checks Run() {
    std::vector<devices::Device> found;
    return CheckGpus(cfg_, found);
  }

  test::TempDir dir_;
  config::ServeConfig cfg_;
};

TEST_F(GpuCheck, AGpuWithEveryFileIsOk) {
  const auto checks = Run();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].check, "GPU 0000:e7:00.0");
  EXPECT_EQ(checks[0].status, Status::kOk);
  EXPECT_EQ(checks[0].detail,
            "NVIDIA Test GPU, 16Gi, LUID 0x00000000_0x000E7E20, driver 31.0.15.5222; 2 runtime "
            "file(s) present");
}

TEST_F(GpuCheck, OneFileGoneFromAFolderThatIsThereIsAWarning) {
  std::filesystem::remove(dir_ / "store/gpu32.dll");
  const auto checks = Run();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kWarning);
  EXPECT_NE(checks[0].detail.find(
                "1 of 2 runtime file(s) its driver lists are missing: " + dir_ / "store/gpu32.dll" +
                " (DriverStore folder " + dir_ / "store" + ")"),
            std::string::npos)
      << checks[0].detail;
}

TEST_F(GpuCheck, EveryFileOrTheFolderGoneFails) {
  std::filesystem::remove(dir_ / "store/gpu32.dll");
  std::filesystem::remove(dir_ / "store/gpu64.dll");
  auto checks = Run();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFailed);
  EXPECT_NE(checks[0].fix.find("reinstall the GPU's driver"), std::string::npos);

  std::filesystem::remove_all(dir_ / "store");
  checks = Run();
  EXPECT_EQ(checks[0].status, Status::kFailed);
  EXPECT_NE(checks[0].detail.find("(DriverStore folder " + dir_ / "store" + ", gone)"),
            std::string::npos)
      << checks[0].detail;
}

TEST_F(GpuCheck, NoGpuAndAnUnreadableSourceFail) {
  std::ofstream(dir_ / "inventory.yaml") << "devices: []\n";
  auto checks = Run();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFailed);
  EXPECT_EQ(checks[0].detail.rfind(
                "discovery (inventory:" + dir_ / "inventory.yaml" + ") hands out no GPU", 0),
            0u)
      << checks[0].detail;
  cfg_.device_source = "inventory:" + dir_ / "missing.yaml";
  checks = Run();
  EXPECT_EQ(checks[0].status, Status::kFailed);
  EXPECT_EQ(checks[0].detail.rfind("device source inventory:" + dir_ / "missing.yaml", 0), 0u)
      << checks[0].detail;
}

}  // namespace
}  // namespace dxshim::doctor
