// The operator's extra runtime files per vendor (devices/vendor_runtime_files.h): appended after
// the driver's own list, never overriding a file the driver names, matched by vendor name or id.
#include "devices/vendor_runtime_files.h"

#include <gtest/gtest.h>

#include "devices/inventory_file.h"

namespace dxshim::devices {
namespace {

const std::string kExamples = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/";

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

}  // namespace
}  // namespace dxshim::devices
