#include "devices/linux_discovery.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>

namespace dxshim::devices {
namespace {

namespace fs = std::filesystem;

std::string ReadLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw DiscoveryError("cannot read " + path.string());
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::uint64_t ReadHex(const fs::path& path, std::uint64_t max) {
  const auto text = ReadLine(path);
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || value > max) {
    throw DiscoveryError(path.string() + ": '" + text + "' is not a PCI id");
  }
  return value;
}

std::optional<std::string> ReadOptional(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  return ReadLine(path);
}

}  // namespace

std::vector<Device> DiscoverLinux(const std::string& sysfs_root, const std::string& dev_root) {
  const fs::path drm = fs::path(sysfs_root) / "class/drm";
  std::error_code ec;
  if (!fs::is_directory(drm, ec)) return {};  // no DRM at all: no GPU
  std::vector<Device> out;
  for (const auto& entry : fs::directory_iterator(drm)) {
    const auto node = entry.path().filename().string();
    if (!node.starts_with("renderD")) continue;
    const fs::path pci = fs::canonical(entry.path() / "device", ec);
    if (ec) throw DiscoveryError("cannot resolve " + (entry.path() / "device").string());
    Device d;
    d.id = pci.filename().string();
    d.location_path = (fs::path(dev_root) / "dri" / node).string();
    d.vendor_id = static_cast<std::uint16_t>(ReadHex(pci / "vendor", 0xffff));
    d.device_id = static_cast<std::uint16_t>(ReadHex(pci / "device", 0xffff));
    const auto sub_vendor = ReadHex(pci / "subsystem_vendor", 0xffff);
    const auto sub_device = ReadHex(pci / "subsystem_device", 0xffff);
    // Windows' SUBSYS_ssssvvvv order: subsystem device id high, subsystem vendor id low.
    d.subsystem_id = static_cast<std::uint32_t>((sub_device << 16) | sub_vendor);
    if (fs::exists(pci / "revision", ec)) {
      d.revision = static_cast<std::uint8_t>(ReadHex(pci / "revision", 0xff));
    }
    d.vendor = VendorName(d.vendor_id);
    const auto driver = fs::read_symlink(pci / "driver", ec);
    const std::string driver_name = ec ? "" : driver.filename().string();
    d.description = (d.vendor.empty() ? "GPU" : d.vendor + " GPU") + " " + d.id +
                    (driver_name.empty() ? "" : " (" + driver_name + ")");
    if (!driver_name.empty()) {
      if (auto v = ReadOptional(pci / "driver/module/version")) d.driver_version = *v;
    }
    if (auto vram = ReadOptional(pci / "mem_info_vram_total")) {
      std::from_chars(vram->data(), vram->data() + vram->size(), d.dedicated_memory);
    }
    // "DDDD:BB:dd.f": bus 00 is the root complex itself.
    d.integrated = d.id.size() >= 7 && d.id.compare(5, 2, "00") == 0;
    d.device_class = DeviceClass::kDisplay;
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  return out;
}

}  // namespace dxshim::devices
