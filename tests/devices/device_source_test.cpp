// The shim's device snapshot over real inventory files, and the operator's extra runtime files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "devices/device_source.h"
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

TEST(VendorRuntimeFiles, AppendAfterTheDriversListWithoutOverriding) {
  auto devices = LoadInventoryFile(kExamples + "hetero-node.yaml");
  const auto before = devices;
  const std::vector<VendorRuntimeFiles> extras = {
      {"nvidia", 0, {{"nvidia-smi.exe", "nvidia-smi.exe"}, {"evil.dll", "NVCUDA.DLL"}}, {}},
      {"", 0x1002, {}, {{"amdxx32.dll", "amdxx32.dll"}}},
  };
  AddVendorRuntimeFiles(devices, extras);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    if (d.vendor == "NVIDIA") {
      ASSERT_EQ(d.system32.size(), before[i].system32.size() + 1) << d.id;
      EXPECT_EQ(d.system32.back(), (RuntimeFile{"nvidia-smi.exe", "nvidia-smi.exe"}));
      // nvcuda.dll stays the driver's own file.
      for (const auto& f : d.system32) EXPECT_NE(f.source, "evil.dll");
      EXPECT_EQ(d.syswow64, before[i].syswow64);
    } else if (d.vendor_id == 0x1002) {
      EXPECT_EQ(d.system32, before[i].system32);
      EXPECT_EQ(d.syswow64.back(), (RuntimeFile{"amdxx32.dll", "amdxx32.dll"}));
    } else {
      EXPECT_EQ(d, before[i]);
    }
  }
  Device no_store = before.front();
  no_store.driver_store.clear();
  std::vector<Device> one = {no_store};
  AddVendorRuntimeFiles(one, extras);
  EXPECT_EQ(one.front().system32, no_store.system32);
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
