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

}  // namespace
}  // namespace dxshim::devices
