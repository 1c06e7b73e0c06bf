#include "devices/windows_adapter.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"

namespace dxshim::devices {
namespace {

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

std::string ChooseLocationPath(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (StartsWithIgnoreCase(p, "PCIROOT(")) return p;
  }
  return paths.empty() ? std::string() : paths.front();
}

}  // namespace

std::optional<std::string> SkipReason(const DxCoreFacts& adapter) {
  if (!adapter.hardware) return "software adapter (e.g. Microsoft Basic Render Driver)";
  if (!adapter.d3d12_graphics && !adapter.d3d12_core_compute) {
    return "supports neither D3D12 graphics nor D3D12 core compute";
  }
  return std::nullopt;
}

std::string FormatDriverVersion(std::uint64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", static_cast<unsigned>(version >> 48),
                static_cast<unsigned>((version >> 32) & 0xffff),
                static_cast<unsigned>((version >> 16) & 0xffff),
                static_cast<unsigned>(version & 0xffff));
  return buf;
}

std::string ExpandSystemRoot(std::string_view path, std::string_view windows_dir) {
  constexpr std::string_view kPrefix = "\\SystemRoot";
  if (!StartsWithIgnoreCase(path, kPrefix)) return std::string(path);
  const auto rest = path.substr(kPrefix.size());
  if (!rest.empty() && rest.front() != '\\') return std::string(path);  // e.g. \SystemRootX
  std::string out(windows_dir);
  while (!out.empty() && out.back() == '\\') out.pop_back();
  return out + std::string(rest);
}

bool IsContainerDriverStore(std::string_view path) {
  constexpr std::string_view kMarker = "\\HostDriverStore";
  for (std::size_t i = 0; i + kMarker.size() <= path.size(); ++i) {
    if (!EqualsIgnoreCase(path.substr(i, kMarker.size()), kMarker)) continue;
    const auto end = i + kMarker.size();
    if (end == path.size() || path[end] == '\\') return true;
  }
  return false;
}

Device MakeWindowsDevice(const DxCoreFacts& adapter, const PnpFacts& pnp,
                         const std::string& driver_store, std::vector<RuntimeFile> system32,
                         std::vector<RuntimeFile> syswow64) {
  const auto name = "adapter " + FormatLuid(adapter.luid) +
                    (pnp.instance_id.empty() ? "" : " (" + pnp.instance_id + ")");
  if (adapter.vendor_id > 0xffff || adapter.device_id > 0xffff || adapter.revision > 0xff) {
    throw std::invalid_argument(name + ": hardware id " + HexNumber(adapter.vendor_id, 4) + "/" +
                                HexNumber(adapter.device_id, 4) +
                                " is not a PCI id (only PCI adapters can be assigned)");
  }
  if (!pnp.unreadable.empty()) throw std::invalid_argument(name + ": PnP device " + pnp.unreadable);
  Device d;
  d.id = pnp.instance_id;
  d.luid = adapter.luid;
  d.location_path = ChooseLocationPath(pnp.location_paths);
  if (d.id.empty()) throw std::invalid_argument(name + ": no PnP device carries this GPU LUID");
  if (d.location_path.empty()) throw std::invalid_argument(name + ": no location path");
  d.description = adapter.description.empty() ? pnp.description : adapter.description;
  d.vendor_id = static_cast<std::uint16_t>(adapter.vendor_id);
  d.device_id = static_cast<std::uint16_t>(adapter.device_id);
  d.subsystem_id = adapter.subsystem_id;
  d.revision = static_cast<std::uint8_t>(adapter.revision);
  d.vendor = VendorName(d.vendor_id);
  if (d.vendor.empty()) d.vendor = pnp.manufacturer;
  d.device_class = adapter.d3d12_graphics ? DeviceClass::kDisplay : DeviceClass::kCompute;
  d.integrated = adapter.integrated;
  d.detachable = adapter.detachable;
  d.dedicated_memory = adapter.dedicated_memory;
  d.driver_version = adapter.driver_version ? FormatDriverVersion(adapter.driver_version) : "";
  d.driver_store = driver_store;
  d.driver_key = pnp.driver_key;
  d.system32 = std::move(system32);
  d.syswow64 = std::move(syswow64);
  return d;
}

std::optional<PciLocation> ParsePciLocationInfo(std::string_view text) {
  // Whole words and decimal numbers only, as the PCI bus driver writes them.
  const auto number = [&text](std::string_view word, std::uint32_t& value) {
    if (!text.starts_with(word)) return false;
    text.remove_prefix(word.size());
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return false;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return true;
  };
  PciLocation pci;
  std::uint32_t segment = 0;
  if (!text.starts_with("PCI ")) return std::nullopt;
  text.remove_prefix(4);
  if (text.starts_with("segment ")) {
    if (!number("segment ", segment) || !text.starts_with(" ")) return std::nullopt;
    text.remove_prefix(1);
  }
  pci.segment = segment;
  if (!number("bus ", pci.bus) || !number(", device ", pci.device) ||
      !number(", function ", pci.function) || !text.empty() || pci.bus > 0xff ||
      pci.device > 0x1f || pci.function > 7) {
    return std::nullopt;
  }
  return pci;
}

std::optional<PciLocation> PciLocationOf(const PnpFacts& pnp) {
  if (auto parsed = ParsePciLocationInfo(pnp.location_info)) return parsed;
  if (!pnp.bus_number || !pnp.address) return std::nullopt;
  PciLocation pci;
  pci.bus = *pnp.bus_number & 0xffu;
  pci.device = (*pnp.address >> 16) & 0xffffu;
  pci.function = *pnp.address & 0xffffu;
  return pci;
}

}  // namespace dxshim::devices
