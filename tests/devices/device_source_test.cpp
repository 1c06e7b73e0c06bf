// The device snapshot (devices/device_source.h) over real inventory files: it follows the file,
// keeps the last good read, refreshes in the background, and filters integrated and detachable
// GPUs only when configured.
#include "devices/device_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "devices/inventory_file.h"
#include "devices/make_device_source.h"
#include "devices/vendor_runtime_files.h"
#include "tests/support/temp_dir.h"

namespace dxshim::devices {
namespace {

const std::string kExamples = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/";

void Copy(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to + ".tmp", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(to + ".tmp", to);  // atomic, like an operator's config management
}

TEST(DeviceSnapshot, FollowsTheInventoryFileAndKeepsTheLastGoodOne) {
  test::TempDir dir;
  const std::string path = dir / "inventory.yaml";
  Copy(kExamples + "nvidia-t4.yaml", path);
  SnapshotOptions options;
  options.extra_runtime_files = {{"NVIDIA", 0, {{"nvidia-smi.exe", "nvidia-smi.exe"}}, {}}};
  DeviceSnapshot snapshot(MakeDeviceSource("inventory:" + path), options);
  const auto first = snapshot.Current();
  ASSERT_EQ(first->devices.size(), 1u);
  EXPECT_EQ(first->generation, 1u);
  EXPECT_EQ(first->devices[0].system32.back().source, "nvidia-smi.exe");  // extras applied
  EXPECT_FALSE(snapshot.Refresh());  // unchanged file: not even re-read
  EXPECT_EQ(snapshot.Current(), first);

  Copy(kExamples + "hetero-node.yaml", path);
  EXPECT_TRUE(snapshot.Refresh());
  const auto second = snapshot.Current();
  EXPECT_EQ(second->generation, 2u);
  EXPECT_EQ(second->devices.size(), LoadInventoryFile(kExamples + "hetero-node.yaml").size());
  EXPECT_EQ(first->devices.size(), 1u);  // readers holding the old snapshot keep it whole

  std::ofstream(path) << "devices: [ {id: broken";  // a half-written file
  EXPECT_FALSE(snapshot.Refresh());
  EXPECT_EQ(snapshot.Current(), second);
  std::filesystem::remove(path);
  EXPECT_FALSE(snapshot.Refresh());
  EXPECT_EQ(snapshot.Current(), second);
}

TEST(DeviceSnapshot, BackgroundRefreshPicksUpChanges) {
  test::TempDir dir;
  const std::string path = dir / "inventory.yaml";
  Copy(kExamples + "nvidia-t4.yaml", path);
  SnapshotOptions options;
  options.refresh_interval = std::chrono::milliseconds(20);
  DeviceSnapshot snapshot(MakeDeviceSource("inventory:" + path), options);
  snapshot.StartBackgroundRefresh();
  Copy(kExamples + "hetero-node.yaml", path);
  // Bounded wait for the background thread (not a timing assertion: 10 s is 500 intervals).
  for (int i = 0; i < 1000 && snapshot.Current()->generation == 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(snapshot.Current()->generation, 2u);
}

TEST(DeviceSnapshot, AnUnreadableSourceAtStartIsAnError) {
  EXPECT_THROW(DeviceSnapshot(MakeDeviceSource("inventory:/nonexistent.yaml"), {}), InventoryError);
  EXPECT_THROW(MakeDeviceSource("windows"), std::invalid_argument);
  EXPECT_THROW(MakeDeviceSource("bogus"), std::invalid_argument);
}

TEST(DeviceSnapshot, IntegratedAndDetachableOnlyWhenConfigured) {
  SnapshotOptions options;
  DeviceSnapshot without(MakeDeviceSource("inventory:" + kExamples + "intel-igpu.yaml"), options);
  EXPECT_TRUE(without.Current()->devices.empty());
  options.include_integrated = true;
  DeviceSnapshot with(MakeDeviceSource("inventory:" + kExamples + "intel-igpu.yaml"), options);
  EXPECT_EQ(with.Current()->devices.size(), 1u);
}

}  // namespace
}  // namespace dxshim::devices
