// How Windows discovery's facts become a Device (devices/windows_adapter.h). The facts are the
// values a Tesla T4 node reports (captured by hand from DXCore, CfgMgr32 and D3DKMT on such a
// node); no Windows GPU exists here, which is why this logic is portable and tested on Linux.
#include "devices/windows_adapter.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dxshim::devices {
namespace {

DxCoreFacts T4Adapter() {
  DxCoreFacts a;
  a.luid = 0x0000d1a7;
  a.vendor_id = 0x10de;
  a.device_id = 0x1eb8;
  a.subsystem_id = 0x12a210de;
  a.revision = 0xa1;
  a.description = "NVIDIA Tesla T4";
  a.driver_version = (31ull << 48) | (0ull << 32) | (15ull << 16) | 3742ull;
  a.dedicated_memory = 15ull << 30;
  a.d3d12_graphics = true;
  a.d3d12_core_compute = true;
  return a;
}

PnpFacts T4Node() {
  PnpFacts p;
  p.instance_id = "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\3&2411E6FE&1&F0";
  p.location_paths = {"ACPI(_SB_)#ACPI(PCI0)#ACPI(S30_)", "PCIROOT(0)#PCI(1E00)"};
  p.driver_key = "{4d36e968-e325-11ce-bfc1-08002be10318}\\0001";
  p.description = "NVIDIA Tesla T4 (PnP)";
  p.manufacturer = "NVIDIA";
  return p;
}

TEST(WindowsAdapter, SkipsSoftwareAndNonD3D12Adapters) {
  auto a = T4Adapter();
  EXPECT_FALSE(SkipReason(a).has_value());
  a.hardware = false;
  EXPECT_NE(SkipReason(a).value_or("").find("software adapter"), std::string::npos);
  a = T4Adapter();
  a.d3d12_graphics = a.d3d12_core_compute = false;
  EXPECT_NE(SkipReason(a).value_or("").find("neither D3D12"), std::string::npos);
  a.d3d12_core_compute = true;  // compute-only MCDM device: kept
  EXPECT_FALSE(SkipReason(a).has_value());
}

TEST(WindowsAdapter, DriverVersionHasFourSixteenBitParts) {
  EXPECT_EQ(FormatDriverVersion(T4Adapter().driver_version), "31.0.15.3742");
  EXPECT_EQ(FormatDriverVersion(0xffffffffffffffffull), "65535.65535.65535.65535");
  EXPECT_EQ(FormatDriverVersion(0), "0.0.0.0");
}

TEST(WindowsAdapter, ExpandsSystemRootOnly) {
  const std::string store =
      "\\SystemRoot\\System32\\DriverStore\\FileRepository\\nv_dispsi.inf_amd64_1";
  EXPECT_EQ(ExpandSystemRoot(store, "C:\\Windows"),
            "C:\\Windows\\System32\\DriverStore\\FileRepository\\nv_dispsi.inf_amd64_1");
  EXPECT_EQ(ExpandSystemRoot(store, "D:\\WINDOWS\\"),
            "D:\\WINDOWS\\System32\\DriverStore\\FileRepository\\nv_dispsi.inf_amd64_1");
  EXPECT_EQ(ExpandSystemRoot("\\systemroot\\x", "C:\\Windows"), "C:\\Windows\\x");
  EXPECT_EQ(ExpandSystemRoot("\\SystemRootX\\x", "C:\\Windows"), "\\SystemRootX\\x");
  EXPECT_EQ(ExpandSystemRoot("C:\\Windows\\x", "E:\\W"), "C:\\Windows\\x");
}

TEST(WindowsAdapter, RecognisesTheContainerView) {
  EXPECT_TRUE(IsContainerDriverStore(
      "C:\\Windows\\System32\\HostDriverStore\\FileRepository\\nv_dispsi.inf_amd64_1"));
  EXPECT_TRUE(IsContainerDriverStore("c:\\windows\\system32\\hostdriverstore"));
  EXPECT_FALSE(IsContainerDriverStore(
      "C:\\Windows\\System32\\DriverStore\\FileRepository\\nv_dispsi.inf_amd64_1"));
  EXPECT_FALSE(IsContainerDriverStore("C:\\Windows\\System32\\HostDriverStoreBackup\\x"));
}

TEST(WindowsAdapter, MakesTheT4Device) {
  const std::vector<RuntimeFile> files = {{"nvcuda_loader64.dll", "nvcuda.dll"}};
  const auto d = MakeWindowsDevice(T4Adapter(), T4Node(), "C:\\Store", files, {});
  EXPECT_EQ(d.id, T4Node().instance_id);
  EXPECT_EQ(d.location_path, "PCIROOT(0)#PCI(1E00)");  // the PCI path, not the ACPI one
  EXPECT_EQ(FormatLuid(d.luid), "0x00000000_0x0000D1A7");
  EXPECT_EQ(d.description, "NVIDIA Tesla T4");
  EXPECT_EQ(d.vendor, "NVIDIA");
  EXPECT_EQ(HardwareId(d), "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1");
  EXPECT_EQ(d.device_class, DeviceClass::kDisplay);
  EXPECT_EQ(d.dedicated_memory, 15ull << 30);
  EXPECT_EQ(d.driver_version, "31.0.15.3742");
  EXPECT_EQ(d.driver_store, "C:\\Store");
  EXPECT_EQ(d.driver_key, "{4d36e968-e325-11ce-bfc1-08002be10318}\\0001");
  EXPECT_EQ(d.system32, files);
  EXPECT_TRUE(d.syswow64.empty());
  EXPECT_TRUE(d.present);
}

TEST(WindowsAdapter, ComputeOnlyUnknownVendorAndFallbacks) {
  auto a = T4Adapter();
  a.d3d12_graphics = false;
  a.vendor_id = 0x1e52;  // not in dxshim's vendor table
  a.description.clear();
  a.driver_version = 0;
  auto p = T4Node();
  p.location_paths = {"ACPI(_SB_)#ACPI(NPU0)"};  // no PCI path: the first one is used
  p.manufacturer = "Acme Accelerators";
  const auto d = MakeWindowsDevice(a, p, "", {}, {});
  EXPECT_EQ(d.device_class, DeviceClass::kCompute);
  EXPECT_EQ(d.vendor, "Acme Accelerators");
  EXPECT_EQ(d.description, "NVIDIA Tesla T4 (PnP)");
  EXPECT_EQ(d.driver_version, "");
  EXPECT_EQ(d.location_path, "ACPI(_SB_)#ACPI(NPU0)");
}

TEST(WindowsAdapter, RefusesWhatCannotBeAssigned) {
  auto p = T4Node();
  p.location_paths.clear();
  EXPECT_THROW(
      {
        try {
          MakeWindowsDevice(T4Adapter(), p, "", {}, {});
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("adapter 0x00000000_0x0000D1A7"), std::string::npos);
          EXPECT_NE(std::string(e.what()).find("no location path"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  auto a = T4Adapter();
  a.vendor_id = 0x4d4f4351;  // an ACPI vendor id ("QCOM"): not a PCI adapter
  EXPECT_THROW(MakeWindowsDevice(a, T4Node(), "", {}, {}), std::invalid_argument);
  EXPECT_THROW(MakeWindowsDevice(T4Adapter(), PnpFacts{}, "", {}, {}), std::invalid_argument);
}

// A PnP property that names the device and held UTF-16 with no UTF-8 form (pnp_devices.cpp) skips
// the adapter, naming the property; a non-ASCII DriverStore folder is kept as its UTF-8 bytes.
TEST(WindowsAdapter, AnUnreadablePnpPropertyRefusesTheAdapter) {
  auto p = T4Node();
  p.unreadable =
      "DEVPKEY_Device_Driver '{4d36e968-e325-11ce-bfc1-08002be10318}\\0001\\uD800' holds an "
      "unpaired UTF-16 surrogate (U+D800 at character 43), which has no UTF-8 form";
  try {
    MakeWindowsDevice(T4Adapter(), p, "", {}, {});
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "adapter 0x00000000_0x0000D1A7 (" + p.instance_id + "): PnP device " + p.unreadable);
  }
  const std::string store =
      "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_\xc3\xb1\xe2\x82\xac"
      "\xe6\xbc\xa2";
  EXPECT_EQ(MakeWindowsDevice(T4Adapter(), T4Node(), store, {}, {}).driver_store, store);
}

TEST(WindowsAdapter, PciLocationInfoAsThePciBusDriverWritesIt) {
  const auto multi = ParsePciLocationInfo("PCI segment 1 bus 0, device 0, function 0");
  ASSERT_TRUE(multi);
  EXPECT_EQ(NvmlBusId(*multi), "00000001:00:00.0");
  const auto single = ParsePciLocationInfo("PCI bus 59, device 30, function 3");  // decimal
  ASSERT_TRUE(single);
  EXPECT_EQ(NvmlBusId(*single), "00000000:3b:1e.3");
  for (const char* other :
       {"", "Virtual PCI Bus Slot 2 Serial 2", "PCI bus 59, device 0",
        "PCI bus 59, device 0, "
        "function 0 ",
        "PCI bus 256, device 0, function 0", "PCI bus 1, device 32, function 0",
        "PCI bus 1, device 0, function 8", "PCI segment  bus 1, device 0, function 0",
        "PCI bus -1, device 0, function 0", "PCI bus 0x3b, device 0, function 0",
        "PCI \xe6\x80\xbb\xe7\xba\xbf 1\xe3\x80\x81\xe8\xae\xbe\xe5\xa4\x87 0"}) {
    EXPECT_FALSE(ParsePciLocationInfo(other)) << other;
  }
}

TEST(WindowsAdapter, PciLocationFromLocationInfoElseBusNumberAndAddress) {
  PnpFacts p;
  EXPECT_FALSE(PciLocationOf(p));  // the PnP device did not say
  p.bus_number = 0x3b;
  EXPECT_FALSE(PciLocationOf(p));
  p.address = (0x1eu << 16) | 0x3u;  // DEVPKEY_Device_Address on PCI: device << 16 | function
  auto pci = PciLocationOf(p);
  ASSERT_TRUE(pci);
  EXPECT_FALSE(pci->segment);
  EXPECT_EQ(NvmlBusId(*pci), "3b:1e.3");
  p.bus_number = 0x1003b;  // the bits above the bus are not taken for a segment
  EXPECT_EQ(NvmlBusId(*PciLocationOf(p)), "3b:1e.3");
  p.location_info = "Virtual PCI Bus Slot 2 Serial 2";  // Hyper-V vPCI: no address in it
  EXPECT_EQ(NvmlBusId(*PciLocationOf(p)), "3b:1e.3");
  p.location_info = "PCI segment 2 bus 0, device 0, function 0";
  EXPECT_EQ(NvmlBusId(*PciLocationOf(p)), "00000002:00:00.0");
}

}  // namespace
}  // namespace dxshim::devices
