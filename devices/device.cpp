#include "devices/device.h"

#include <cctype>
#include <cstdio>
#include <iterator>

namespace dxshim::devices {

const char* ToString(DeviceClass c) { return c == DeviceClass::kDisplay ? "display" : "compute"; }

std::string HardwareId(const Device& d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "PCI\\VEN_%04X&DEV_%04X&SUBSYS_%08X&REV_%02X", d.vendor_id,
                d.device_id, d.subsystem_id, d.revision);
  return buf;
}

std::string FormatLuid(std::uint64_t luid) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%08x:0x%08x", static_cast<unsigned>(luid >> 32),
                static_cast<unsigned>(luid & 0xffffffffu));
  return buf;
}

std::string CounterLuid(std::uint64_t luid) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%08X_0x%08X", static_cast<unsigned>(luid >> 32),
                static_cast<unsigned>(luid & 0xffffffffu));
  return buf;
}

std::string VendorName(std::uint16_t vendor_id) {
  switch (vendor_id) {
    case 0x10de:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x1414:
      return "Microsoft";
    case 0x1af4:
      return "Red Hat (virtio)";
    case 0x1234:
      return "QEMU";
    default:
      return "";
  }
}

bool IsNvmlGpuUuid(std::string_view text) {
  constexpr std::string_view kPrefix = "GPU-";
  if (!text.starts_with(kPrefix)) return false;
  text.remove_prefix(kPrefix.size());
  constexpr std::size_t kGroups[] = {8, 4, 4, 4, 12};
  for (std::size_t g = 0; g < std::size(kGroups); ++g) {
    if (g > 0) {
      if (text.empty() || text.front() != '-') return false;
      text.remove_prefix(1);
    }
    if (text.size() < kGroups[g]) return false;
    for (std::size_t i = 0; i < kGroups[g]; ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (!std::isdigit(c) && (c < 'a' || c > 'f')) return false;  // NVML writes lower case
    }
    text.remove_prefix(kGroups[g]);
  }
  return text.empty();
}

std::string HexNumber(std::uint64_t value, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", digits, static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace dxshim::devices
