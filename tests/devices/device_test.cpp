// The device model's formatting (devices/device.h): hardware ids and LUIDs as Windows writes them.
#include "devices/device.h"

#include <gtest/gtest.h>

namespace dxshim::devices {
namespace {

TEST(Devices, HardwareIdAndLuidFormatting) {
  Device d;
  d.vendor_id = 0x10de;
  d.device_id = 0x1eb8;
  d.subsystem_id = 0x12a210de;
  d.revision = 0xa1;
  EXPECT_EQ(HardwareId(d), "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1");
  EXPECT_EQ(FormatLuid((0x1ull << 32) | 0xd1a2), "0x00000001:0x0000d1a2");
}

// windows_exporter's example label (docs/collector.gpu.md) and its format string: 8 upper-case hex
// digits each, high part first, joined by '_'.
TEST(Devices, CounterLuidIsWrittenAsWindowsExporterLabelsIt) {
  EXPECT_EQ(CounterLuid(0x10F8A), "0x00000000_0x00010F8A");
  EXPECT_EQ(CounterLuid(0x1136A), "0x00000000_0x0001136A");
  EXPECT_EQ(CounterLuid((0xABull << 32) | 0xd1a2), "0x000000AB_0x0000D1A2");
  EXPECT_EQ(CounterLuid(0xFFFFFFFFFFFFFFFFull), "0xFFFFFFFF_0xFFFFFFFF");
}

}  // namespace
}  // namespace dxshim::devices
