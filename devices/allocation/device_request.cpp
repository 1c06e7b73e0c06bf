#include "devices/allocation/device_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "devices/allocation/gpu_memory.h"
#include "devices/byte_quantity.h"
#include "devices/dxshim_keys.h"
#include "devices/runtime_files.h"
#include "shim/base/comma_list.h"

namespace dxshim::devices {
namespace {

constexpr unsigned kMaxCount = 16;

// `key`: the whole annotation name (devices/dxshim_keys.h).
[[noreturn]] void Fail(const std::string& key, const std::string& value,
                       const std::string& problem) {
  throw RequestError("annotation " + key + "='" + value + "': " + problem);
}

std::string Trim(std::string_view s) { return std::string(TrimBlanks(s)); }

// Comma-separated, no empty items, no duplicates (case-insensitive).
std::vector<std::string> List(const std::string& key, const std::string& value) {
  std::vector<std::string> out;
  for (const auto view : SplitCommaList(value)) {
    std::string item(view);
    if (item.empty()) Fail(key, value, "has an empty item");
    for (const auto& seen : out) {
      if (EqualsIgnoreCase(seen, item)) Fail(key, value, "lists '" + item + "' twice");
    }
    out.push_back(std::move(item));
  }
  return out;
}

bool ParseHex(std::string_view text, std::uint64_t& out) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<std::uint64_t> ParseLuid(std::string_view text) {
  if (!text.starts_with("0x") && !text.starts_with("0X")) return std::nullopt;
  const auto colon = text.find(':');
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  if (colon == std::string_view::npos) {
    if (!ParseHex(text, low)) return std::nullopt;
    return low;
  }
  if (!ParseHex(text.substr(0, colon), high) || !ParseHex(text.substr(colon + 1), low) ||
      high > 0xffffffffu || low > 0xffffffffu) {
    return std::nullopt;
  }
  return (high << 32) | low;
}

void ParseVendor(const std::string& value, DeviceRequest& r) {
  const auto v = Trim(value);
  if (v.starts_with("0x") || v.starts_with("0X")) {
    std::uint64_t id = 0;
    if (!ParseHex(v, id) || id == 0 || id > 0xffff)
      Fail(keys::kVendor, value, "not a PCI vendor id");
    r.vendor_id = static_cast<std::uint16_t>(id);
    return;
  }
  const bool ok = !v.empty() && v.size() <= 64 && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '-' || c == '.';
  });
  if (!ok) Fail(keys::kVendor, value, "not a vendor name (e.g. nvidia, amd, intel) or id (0x10de)");
  r.vendor = ToLowerAscii(v);
}

void ParseCount(const std::string& value, DeviceRequest& r) {
  unsigned n = 0;
  const auto v = Trim(value);
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty() || n < 1 || n > kMaxCount) {
    Fail(keys::kGpu, value, "not a GPU count from 1 to " + std::to_string(kMaxCount));
  }
  r.count = n;
}

void ParseRequires(const std::string& value, DeviceRequest& r) {
  for (const auto& item : List(keys::kRequires, value)) {
    const auto api = RequirableApis().find(ToLowerAscii(item));
    if (api != RequirableApis().end()) {
      r.required_files.push_back(api->second);
    } else if (!UnsafeDestinationReason(item) && item.find('.') != std::string::npos) {
      r.required_files.push_back(item);
    } else {
      std::string apis;
      for (const auto& [name, file] : RequirableApis()) apis += (apis.empty() ? "" : ", ") + name;
      Fail(keys::kRequires, value,
           "'" + item + ("' is neither a file name (e.g. nvcuda.dll) nor an API (" + apis + ")"));
    }
  }
}

void ParseContainers(const std::string& value, DeviceRequest& r) {
  for (auto& name : List(keys::kContainers, value)) {
    // A Kubernetes container name: DNS label.
    const bool ok = name.size() <= 63 && std::all_of(name.begin(), name.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                    });
    if (!ok) Fail(keys::kContainers, value, "'" + name + "' is not a container name");
    r.containers.push_back(std::move(name));
  }
}

}  // namespace

std::optional<DeviceRequest> ParseDeviceRequest(
    const std::map<std::string, std::string>& annotations) {
  auto it = annotations.lower_bound(std::string(keys::kPrefix));
  if (it == annotations.end() || !it->first.starts_with(keys::kPrefix)) return std::nullopt;
  DeviceRequest r;
  bool count_given = false;
  for (; it != annotations.end() && it->first.starts_with(keys::kPrefix); ++it) {
    const auto& key = it->first;
    const auto& value = it->second;
    if (key == keys::kGpu) {
      ParseCount(value, r);
      count_given = true;
    } else if (key == keys::kClass) {
      const auto v = ToLowerAscii(Trim(value));
      if (v == "display") {
        r.device_class = DeviceClass::kDisplay;
      } else if (v == "compute") {
        r.device_class = DeviceClass::kCompute;
      } else {
        Fail(key, value, "not display or compute");
      }
    } else if (key == keys::kVendor) {
      ParseVendor(value, r);
    } else if (key == keys::kMinMemory) {
      const auto q = ReadByteQuantity(Trim(value));
      switch (q.problem) {
        case ByteQuantity::Problem::kNone:
          r.min_memory = q.bytes;
          break;
        case ByteQuantity::Problem::kNotAQuantity:
          Fail(key, value, "not a quantity of memory such as 8Gi, 8192Mi or 1.5Gi");
        case ByteQuantity::Problem::kNegative:
          Fail(key, value, "negative; give the least memory a GPU must have, e.g. 8Gi");
        case ByteQuantity::Problem::kTooLarge:
          Fail(key, value, "too large: no GPU has that much memory");
      }
    } else if (key == keys::kRequires) {
      ParseRequires(value, r);
    } else if (key == keys::kDevice) {
      r.pins = List(key, value);
    } else if (key == keys::kSharing) {
      const auto v = ToLowerAscii(Trim(value));
      if (v != keys::kExclusive && v != keys::kShared) {
        Fail(key, value, std::string("not ") + keys::kExclusive + " or " + keys::kShared);
      }
      r.exclusive = v == keys::kExclusive;
    } else if (key == keys::kContainers) {
      ParseContainers(value, r);
    } else if (key == keys::kGpuMemory) {
      try {
        r.gpu_memory = ParseGpuMemory(Trim(value));
      } catch (const std::invalid_argument& e) {
        Fail(key, value, e.what());
      }
    } else {
      std::string known;
      for (const auto request_key : keys::kRequestKeys) {
        known += (known.empty() ? "" : ", ") +
                 std::string(request_key.substr(std::string_view(keys::kPrefix).size()));
      }
      throw RequestError("annotation " + it->first + ": unknown " + keys::kPrefix +
                         " key (known: " + known + ")");
    }
  }
  if (!r.pins.empty()) {
    if (!count_given && r.pins.size() > kMaxCount) {
      Fail(keys::kDevice, annotations.at(keys::kDevice),
           "pins " + std::to_string(r.pins.size()) + " devices, more than " +
               std::to_string(kMaxCount) + " GPUs; set " + keys::kGpu + " to how many of them");
    }
    if (!count_given) r.count = static_cast<unsigned>(r.pins.size());
    if (r.count > r.pins.size()) {
      Fail(keys::kGpu, std::to_string(r.count),
           std::string("asks for more GPUs than ") + keys::kDevice + " pins (" +
               std::to_string(r.pins.size()) + ")");
    }
  }
  return r;
}

namespace {

// The plugin device ids kubelet listed in `key`'s value: each a DNS label, none repeated, at most
// `max` of them.
unsigned CountPluginIds(const char* key, const std::string& value, std::size_t max,
                        const char* unit) {
  std::set<std::string> ids;
  for (const auto view : SplitCommaList(value)) {
    const std::string id(view);
    const bool valid =
        !id.empty() && id.size() <= 63 && std::all_of(id.begin(), id.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        });
    if (!valid || !ids.insert(id).second) {
      std::string what = "annotation ";
      what.append(key).append("='").append(value).append("': '");
      what.append(id).append("' is ").append(valid ? "repeated" : "not a dxshim device id");
      throw RequestError(what);
    }
  }
  if (ids.size() > max) {
    throw RequestError("annotation " + std::string(key) + ": " + std::to_string(ids.size()) +
                       " devices, more than " + std::to_string(max) + " " + unit);
  }
  return static_cast<unsigned>(ids.size());
}

}  // namespace

unsigned CountPluginSlots(const std::string& value) {
  return CountPluginIds(keys::kPluginSlotsAnnotation, value, kMaxCount, "GPUs");
}

unsigned CountPluginMemoryUnits(const std::string& value) {
  return CountPluginIds(keys::kPluginMemoryUnitsAnnotation, value, std::size_t{1} << 20,
                        "memory units");
}

bool AppliesTo(const DeviceRequest& request, const std::string& container) {
  if (request.containers.empty()) return true;
  return std::find(request.containers.begin(), request.containers.end(), container) !=
         request.containers.end();
}

std::string Describe(const DeviceRequest& r) {
  std::string out = "gpu=" + std::to_string(r.count);
  if (r.device_class) out += std::string(" class=") + ToString(*r.device_class);
  if (!r.vendor.empty()) out += " vendor=" + r.vendor;
  if (r.vendor_id) out += " vendor=" + HexNumber(r.vendor_id, 4);
  if (r.min_memory) out += " min-memory=" + std::to_string(r.min_memory >> 20) + "Mi";
  for (std::size_t i = 0; i < r.required_files.size(); ++i) {
    out += (i ? "," : " requires=") + r.required_files[i];
  }
  for (std::size_t i = 0; i < r.pins.size(); ++i) out += (i ? "," : " device=") + r.pins[i];
  if (r.gpu_memory) out += " gpu-memory=" + FormatBytes(r.gpu_memory);
  out += std::string(" ") + (r.exclusive ? keys::kExclusive : keys::kShared);
  return out;
}

bool PinMatches(const std::string& pin, const Device& device) {
  if (EqualsIgnoreCase(pin, device.id) || EqualsIgnoreCase(pin, device.location_path)) {
    return true;
  }
  const auto luid = ParseLuid(pin);
  return luid && *luid == device.luid;
}

}  // namespace dxshim::devices
