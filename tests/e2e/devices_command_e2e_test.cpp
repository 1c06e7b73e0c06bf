// `dxshim devices` as an operator runs it, on the example inventories.
#include <gtest/gtest.h>

#include <fstream>

#include "devices/inventory_file.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

const std::string kInventories = DXSHIM_SOURCE_DIR "/deploy/examples/inventories";

struct Run {
  int code;
  std::string output;
};

Run Devices(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> all = {"devices"};
  all.insert(all.end(), args.begin(), args.end());
  static int runs = 0;  // one log file per run: RunDxshim returns the whole file
  Run r;
  r.code = RunDxshim(all, dir / ("devices-" + std::to_string(++runs) + ".log"), &r.output);
  return r;
}

TEST(DevicesCli, TableListsEachAdapter) {
  TempDir dir;
  const auto r = Devices(dir, {"--source", "inventory:" + kInventories + "/hetero-node.yaml"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("DESCRIPTION"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0  NVIDIA Tesla T4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2  AMD Radeon Pro V520 MxGPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PCI\\VEN_1002&DEV_7362&SUBSYS_0A341002&REV_C3"), std::string::npos);
  // The NVIDIA GPUs' UUIDs, where the inventory lists them (the AMD GPU has none: "-").
  EXPECT_NE(r.output.find("  UUID\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  GPU-1a2b3c4d-6e7f-4a8b-9c0d-e1f2a3b4c5d6\n"), std::string::npos);
  EXPECT_NE(r.output.find("3/0          -\n"), std::string::npos) << r.output;
  // No UUID in the inventory, no column.
  const auto amd = Devices(dir, {"--source", "inventory:" + kInventories + "/amd-radeon.yaml"});
  EXPECT_EQ(amd.output.find("UUID"), std::string::npos) << amd.output;
}

TEST(DevicesCli, YamlAndJsonOutputReadBackAsTheSameDevices) {
  TempDir dir;
  const auto path = kInventories + "/nvidia-t4.yaml";
  const auto expected = devices::LoadInventoryFile(path);
  for (const std::string format : {"yaml", "json"}) {
    const auto r = Devices(dir, {"--source", "inventory:" + path, "--output", format});
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(devices::ParseInventory(r.output, format), expected) << r.output;
  }
}

TEST(DevicesCli, LabelsOutputIsTheGoldenNodeLabels) {
  TempDir dir;
  for (const char* name : {"hetero-node", "intel-igpu"}) {
    const auto r = Devices(dir, {"--source", "inventory:" + kInventories + "/" + name + ".yaml",
                                 "--output", "labels"});
    EXPECT_EQ(r.code, 0) << r.output;
    std::ifstream golden(std::string(DXSHIM_SOURCE_DIR "/tests/golden/labels/") + name + ".labels");
    const std::string expected((std::istreambuf_iterator<char>(golden)),
                               std::istreambuf_iterator<char>());
    EXPECT_EQ(r.output, expected) << name;
  }
  // Opting in to integrated GPUs labels them too, as serve would hand them out.
  const auto r = Devices(dir, {"--source", "inventory:" + kInventories + "/intel-igpu.yaml",
                               "--output", "labels", "--include-integrated"});
  EXPECT_NE(r.output.find("dxshim.io/gpu.vendor.intel=true"), std::string::npos) << r.output;
}

TEST(DevicesCli, IntegratedAdaptersOnlyWhenAskedFor) {
  TempDir dir;
  const auto source = "inventory:" + kInventories + "/intel-igpu.yaml";
  auto r = Devices(dir, {"--source", source, "--output", "yaml"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(devices::ParseInventory(r.output, "out").empty()) << r.output;
  r = Devices(dir, {"--source", source, "--output", "yaml", "--include-integrated"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(devices::ParseInventory(r.output, "out").size(), 1u) << r.output;
}

// --config: the configuration's device source and include-* flags, as serve hands GPUs out;
// --source still wins, and a configuration that does not load is a usage error naming it.
TEST(DevicesCli, ConfigGivesServesSourceAndFilters) {
  TempDir dir;
  const auto config = dir / "dxshim.yaml";
  std::ofstream(config) << "device-source: inventory:" << kInventories
                        << "/intel-igpu.yaml\ninclude-integrated: true\n";
  auto r = Devices(dir, {"--config", config, "--output", "yaml"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(devices::ParseInventory(r.output, "out").size(), 1u) << r.output;
  r = Devices(dir, {"--config", config, "--source",
                    "inventory:" + kInventories + "/hetero-node.yaml", "--output", "yaml"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(devices::ParseInventory(r.output, "out").size(), 3u) << r.output;
  std::ofstream(dir / "bad.yaml") << "device-source: [\n";
  r = Devices(dir, {"--config", dir / "bad.yaml"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml"), std::string::npos) << r.output;
}

TEST(DevicesCli, LinuxSourceWithoutDrmListsNoGpu) {
  TempDir dir;
  const auto r = Devices(dir, {"--source", "linux", "--sysfs-root", dir.path()});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(no GPU)"), std::string::npos) << r.output;
}

TEST(DevicesCli, FailuresExitNonZeroWithTheReason) {
  TempDir dir;
  auto r = Devices(dir, {"--source", "inventory:" + dir.path() + "/missing.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("missing.yaml: cannot read"), std::string::npos) << r.output;
  r = Devices(dir,
              {"--source", "inventory:" + kInventories + "/nvidia-t4.yaml", "--output", "xml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--output 'xml'"), std::string::npos) << r.output;
  r = Devices(dir, {"--source", "magic"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("device source 'magic' is not auto, linux, windows"), std::string::npos)
      << r.output;
  r = Devices(dir, {"--source", "windows"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("Windows build"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dxshim::test
