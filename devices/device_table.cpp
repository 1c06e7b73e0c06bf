#include "devices/device_table.h"

#include <algorithm>
#include <cstdio>

namespace dxshim::devices {
namespace {

std::string Memory(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

// "GPU-... (cuda-luid)", "- (none)", "GPU-..." (an inventory's), "-".
std::string UuidCell(const Device& d) {
  auto cell = d.uuid.empty() ? std::string("-") : d.uuid;
  if (!d.uuid_found_by.empty())
    cell += " (" + d.uuid_found_by.substr(0, d.uuid_found_by.find(':')) + ")";
  return cell;
}

}  // namespace

std::string FormatDeviceTable(const std::vector<Device>& devices) {
  const std::vector<std::string> header = {"#",     "DESCRIPTION", "VENDOR",
                                           "CLASS", "MEMORY",      "LOCATION",
                                           "LUID",  "HARDWARE ID", "FILES 64/32"};
  // NVIDIA GPUs' UUIDs, where discovery looked for them or the inventory lists them, with how
  // discovery found each (cuda-luid, nvml-pci) or "none".
  const bool uuids = std::any_of(devices.begin(), devices.end(), [](const Device& d) {
    return !d.uuid.empty() || !d.uuid_found_by.empty();
  });
  std::vector<std::vector<std::string>> rows = {header};
  if (uuids) rows.front().push_back("UUID");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    std::string cls = ToString(d.device_class);
    if (d.integrated) cls += ",integrated";
    if (d.detachable) cls += ",detachable";
    if (!d.present) cls += ",absent";
    rows.push_back({std::to_string(i), d.description, d.vendor, cls, Memory(d.dedicated_memory),
                    d.location_path, FormatLuid(d.luid), HardwareId(d),
                    std::to_string(d.system32.size()) + "/" + std::to_string(d.syswow64.size())});
    if (uuids) rows.back().push_back(UuidCell(d));
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  if (devices.empty()) out += "(no GPU)\n";
  return out;
}

std::vector<Device> SelectUsable(const std::vector<Device>& devices, bool include_integrated,
                                 bool include_detachable) {
  std::vector<Device> out;
  for (const auto& d : devices) {
    if (d.integrated && !include_integrated) continue;
    if (d.detachable && !include_detachable) continue;
    out.push_back(d);
  }
  return out;
}

}  // namespace dxshim::devices
