#include "devices/device.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <stdexcept>

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
  std::snprintf(buf, sizeof(buf), "0x%08X_0x%08X", static_cast<unsigned>(luid >> 32),
                static_cast<unsigned>(luid & 0xffffffffu));
  return buf;
}

namespace {

// One part of a LUID: "0x" and 1 to `max_digits` hex digits. Empty when it is one, else why not.
std::string ReadLuidPart(std::string_view part, const std::string& which, std::size_t max_digits,
                         std::uint64_t& out) {
  if (!part.starts_with("0x") && !part.starts_with("0X")) return which + " has no 0x";
  part.remove_prefix(2);
  if (part.empty()) return which + " has no hex digits after 0x";
  if (!std::all_of(part.begin(), part.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })) {
    return which + " '" + std::string(part) + "' is not hex digits";
  }
  if (part.size() > max_digits) {
    return which + " has " + std::to_string(part.size()) + " hex digits, more than " +
           std::to_string(max_digits);
  }
  std::from_chars(part.data(), part.data() + part.size(), out, 16);
  return "";
}

}  // namespace

std::uint64_t ParseLuid(std::string_view text) {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::string why;
  const auto separator = text.find_first_of("_:");
  if (text.empty()) {
    why = "empty";
  } else if (separator == std::string_view::npos) {
    why = ReadLuidPart(text, "the number", 16, low);
  } else if (text.find_first_of("_:", separator + 1) != std::string_view::npos) {
    why = "more than two parts";
  } else {
    why = ReadLuidPart(text.substr(0, separator), "the high part", 8, high);
    if (why.empty()) why = ReadLuidPart(text.substr(separator + 1), "the low part", 8, low);
  }
  if (!why.empty()) {
    throw std::invalid_argument("'" + std::string(text) + "' is not a LUID (" + kLuidForm +
                                "): " + why);
  }
  return (high << 32) | low;
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
