// Linux discovery against a fake sysfs tree laid out like the kernel's: render nodes under
// class/drm are links into the PCI device tree, `device` links back to the PCI function, `driver`
// links to the bound driver. (No GPU exists on this machine, so the tree stands in for one.)
#include "devices/linux_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace dxshim::devices {
namespace {

namespace fs = std::filesystem;

struct FakePci {
  std::string parent;  // path of the PCI device's parent below devices/
  std::string address;
  std::string vendor, device, subsystem_vendor, subsystem_device, revision;
  std::string driver;
  std::string render_node;
  std::string vram;            // mem_info_vram_total, if the driver reports it
  std::string driver_version;  // driver/module/version, if the module has one
};

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

void AddGpu(const fs::path& root, const FakePci& gpu) {
  const auto pci = root / "devices" / gpu.parent / gpu.address;
  Write(pci / "vendor", gpu.vendor);
  Write(pci / "device", gpu.device);
  Write(pci / "subsystem_vendor", gpu.subsystem_vendor);
  Write(pci / "subsystem_device", gpu.subsystem_device);
  Write(pci / "revision", gpu.revision);
  if (!gpu.vram.empty()) Write(pci / "mem_info_vram_total", gpu.vram);
  const auto driver = root / "bus/pci/drivers" / gpu.driver;
  fs::create_directories(driver);
  if (!gpu.driver_version.empty()) {
    Write(root / "module" / gpu.driver / "version", gpu.driver_version);
    if (!fs::exists(driver / "module"))
      fs::create_directory_symlink(root / "module" / gpu.driver, driver / "module");
  }
  fs::create_directory_symlink(driver, pci / "driver");
  for (const auto& node : {gpu.render_node, std::string("card") + gpu.render_node.substr(7)}) {
    const auto drm = pci / "drm" / node;
    fs::create_directories(drm);
    fs::create_directory_symlink("../..", drm / "device");
    fs::create_directories(root / "class/drm");
    fs::create_directory_symlink(drm, root / "class/drm" / node);
  }
}

class LinuxDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    Write(root / "class/drm/version", "drm 1.1.0 20060810");
    AddGpu(root, {"pci0000:00", "0000:00:02.0", "0x8086", "0x3e92", "0x1043", "0x8694", "0x00",
                  "i915", "renderD128", "", ""});
    AddGpu(root, {"pci0000:00/0000:00:01.0", "0000:01:00.0", "0x10de", "0x1eb8", "0x10de", "0x12a2",
                  "0xa1", "nvidia", "renderD129", "", "535.129.03"});
    AddGpu(root, {"pci0000:00/0000:00:03.0", "0000:03:00.0", "0x1002", "0x7362", "0x1002", "0x0a34",
                  "0xc3", "amdgpu", "renderD130", "8589934592", ""});
  }
  test::TempDir dir;
  fs::path root = fs::path(dir.path()) / "sys";
};

TEST_F(LinuxDiscovery, FindsEveryRenderNodeWithItsPciIdentity) {
  const auto devices = DiscoverLinux(root.string(), "/dev");
  ASSERT_EQ(devices.size(), 3u);
  const auto& intel = devices[0];
  EXPECT_EQ(intel.id, "0000:00:02.0");
  EXPECT_EQ(intel.location_path, "/dev/dri/renderD128");
  EXPECT_EQ(intel.vendor, "Intel");
  EXPECT_TRUE(intel.integrated);

  const auto& nvidia = devices[1];
  EXPECT_EQ(nvidia.id, "0000:01:00.0");
  EXPECT_EQ(nvidia.location_path, "/dev/dri/renderD129");
  EXPECT_EQ(HardwareId(nvidia), "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1");
  EXPECT_EQ(nvidia.driver_version, "535.129.03");
  EXPECT_FALSE(nvidia.integrated);
  EXPECT_NE(nvidia.description.find("nvidia"), std::string::npos) << nvidia.description;
  EXPECT_EQ(nvidia.device_class, DeviceClass::kDisplay);

  const auto& amd = devices[2];
  EXPECT_EQ(amd.vendor, "AMD");
  EXPECT_EQ(amd.dedicated_memory, 8ull << 30);
  EXPECT_EQ(amd.subsystem_id, 0x0a341002u);
}

TEST_F(LinuxDiscovery, NoDrmMeansNoGpu) {
  EXPECT_TRUE(DiscoverLinux((fs::path(dir.path()) / "empty").string()).empty());
}

TEST_F(LinuxDiscovery, UnreadableAttributesNameTheFile) {
  fs::remove(root / "devices/pci0000:00/0000:00:03.0/0000:03:00.0/vendor");
  try {
    DiscoverLinux(root.string());
    FAIL() << "a device without a vendor id was accepted";
  } catch (const DiscoveryError& e) {
    EXPECT_NE(std::string(e.what()).find("0000:03:00.0/vendor"), std::string::npos) << e.what();
  }
  Write(root / "devices/pci0000:00/0000:00:03.0/0000:03:00.0/vendor", "banana");
  try {
    DiscoverLinux(root.string());
    FAIL() << "a malformed vendor id was accepted";
  } catch (const DiscoveryError& e) {
    EXPECT_NE(std::string(e.what()).find("'banana' is not a PCI id"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dxshim::devices
