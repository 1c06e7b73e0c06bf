// The device model's formatting (devices/device.h): hardware ids as Windows writes them, LUIDs as
// windows_exporter labels them, and every LUID spelling dxshim reads, with its refusals.
#include "devices/device.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace dxshim::devices {
namespace {

TEST(Devices, HardwareIdAndLuidFormatting) {
  Device d;
  d.vendor_id = 0x10de;
  d.device_id = 0x1eb8;
  d.subsystem_id = 0x12a210de;
  d.revision = 0xa1;
  EXPECT_EQ(HardwareId(d), "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1");
}

// windows_exporter's example label (docs/collector.gpu.md) and its format string (gpu.go:272): 8
// upper-case hex digits each, high part first, joined by '_'.
TEST(Devices, FormatLuidWritesItAsWindowsExporterLabelsIt) {
  EXPECT_EQ(FormatLuid(0x10F8A), "0x00000000_0x00010F8A");
  EXPECT_EQ(FormatLuid(0x1136A), "0x00000000_0x0001136A");
  EXPECT_EQ(FormatLuid(0xd1a7), "0x00000000_0x0000D1A7");
  EXPECT_EQ(FormatLuid((0x1ull << 32) | 0xd1a2), "0x00000001_0x0000D1A2");
  EXPECT_EQ(FormatLuid((0xABull << 32) | 0xd1a2), "0x000000AB_0x0000D1A2");
  EXPECT_EQ(FormatLuid(0), "0x00000000_0x00000000");
  EXPECT_EQ(FormatLuid(0xFFFFFFFFFFFFFFFFull), "0xFFFFFFFF_0xFFFFFFFF");
}

TEST(Devices, ParseLuidReadsEverySpelling) {
  const std::uint64_t luid = (0xABull << 32) | 0xd1a2;
  EXPECT_EQ(ParseLuid("0x000000AB_0x0000D1A2"), luid);  // FormatLuid's
  EXPECT_EQ(ParseLuid("0x000000ab_0x0000d1a2"), luid);  // any case
  EXPECT_EQ(ParseLuid("0X000000Ab_0X0000d1A2"), luid);
  EXPECT_EQ(ParseLuid("0x000000ab:0x0000d1a2"), luid);  // dxshim's earlier spelling
  EXPECT_EQ(ParseLuid("0x000000AB:0x0000D1A2"), luid);
  EXPECT_EQ(ParseLuid("0xab_0xd1a2"), luid);  // fewer digits
  EXPECT_EQ(ParseLuid("0xab:0xd1a2"), luid);
  EXPECT_EQ(ParseLuid("0xab0000d1a2"), luid);  // one number, as before
  EXPECT_EQ(ParseLuid("0x000000AB0000D1A2"), luid);
  EXPECT_EQ(ParseLuid("0xd1a2"), 0xd1a2u);
  EXPECT_EQ(ParseLuid("0xFFFFFFFF_0xFFFFFFFF"), 0xFFFFFFFFFFFFFFFFull);
  for (const std::uint64_t value : {0ull, 0xd1a7ull, 0x1'0000d1a7ull, 0xFFFFFFFFFFFFFFFFull}) {
    EXPECT_EQ(ParseLuid(FormatLuid(value)), value);
  }
}

std::string ParseLuidError(const std::string& text) {
  try {
    ParseLuid(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Devices, ParseLuidRefusesWhatIsNoLuidSayingWhy) {
  const std::string form = " is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. 0x00000000_0x0000D1A2): ";
  const std::pair<std::string, std::string> cases[] = {
      {"00000000_0x0000D1A2", "the high part has no 0x"},
      {"0x00000000_0000D1A2", "the low part has no 0x"},
      {"00000000:0000d1a2", "the high part has no 0x"},
      {"d1a2", "the number has no 0x"},
      {"0x000000000_0x0000D1A2", "the high part has 9 hex digits, more than 8"},
      {"0x00000000_0x00000D1A2", "the low part has 9 hex digits, more than 8"},
      {"0x00000000:0x00000d1a2", "the low part has 9 hex digits, more than 8"},
      {"0x00000000000000d1a2", "the number has 18 hex digits, more than 16"},
      {"0x00000000_0xD1G2", "the low part 'D1G2' is not hex digits"},
      {"0xzz", "the number 'zz' is not hex digits"},
      {"0x-1", "the number '-1' is not hex digits"},
      {"0x 1", "the number ' 1' is not hex digits"},
      {"0x", "the number has no hex digits after 0x"},
      {"0x00000000_0x", "the low part has no hex digits after 0x"},
      {"0x00000000_", "the low part has no 0x"},
      {"0x1_0x2_0x3", "more than two parts"},
      {"0x1:0x2_0x3", "more than two parts"},
      {"", "empty"},
  };
  for (const auto& [text, why] : cases) {
    EXPECT_EQ(ParseLuidError(text), "'" + text + "'" + form + why);
  }
}

}  // namespace
}  // namespace dxshim::devices
