#include "devices/allocation/device_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "devices/allocation/gpu_memory.h"
#include "devices/byte_quantity.h"
#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim::devices {
namespace {

constexpr unsigned kMaxCount = 16;

// `key`: the whole annotation name (shim/base/dxshim_keys.h).
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

// Whether a pin is meant as a LUID: it starts with 0x, or it is two hex parts joined by '_' or ':'
// of which one lacks its 0x (refused, saying so). No device id or location path has either form.
bool IsLuidPin(std::string_view pin) {
  const auto hex = [](std::string_view part) {
    if (part.starts_with("0x") || part.starts_with("0X")) part.remove_prefix(2);
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  if (pin.starts_with("0x") || pin.starts_with("0X")) return true;
  const auto separator = pin.find_first_of("_:");
  return separator != std::string_view::npos && hex(pin.substr(0, separator)) &&
         hex(pin.substr(separator + 1));
}

// The dxshim.io/device pins; a LUID, in whichever spelling ParseLuid reads, is kept as FormatLuid
// writes it, so that the explanation and the logs show the one spelling.
std::vector<std::string> ParsePins(const std::string& value) {
  auto pins = List(keys::kDevice, value);
  for (std::size_t i = 0; i < pins.size(); ++i) {
    if (!IsLuidPin(pins[i])) continue;
    try {
      pins[i] = FormatLuid(ParseLuid(pins[i]));
    } catch (const std::invalid_argument& e) {
      Fail(keys::kDevice, value, e.what());
    }
    if (std::find(pins.begin(), pins.begin() + static_cast<std::ptrdiff_t>(i), pins[i]) !=
        pins.begin() + static_cast<std::ptrdiff_t>(i)) {
      Fail(keys::kDevice, value, "names LUID " + pins[i] + " twice");
    }
  }
  return pins;
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
      const std::string apis =
          JoinList(RequirableApis(), ", ", [](const auto& named) { return named.first; });
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
      r.pins = ParsePins(value);
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
      const std::string known = JoinList(keys::kRequestKeys, ", ", [](std::string_view k) {
        return k.substr(std::string_view(keys::kPrefix).size());
      });
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
  if (!IsLuidPin(pin)) return false;
  try {
    return ParseLuid(pin) == device.luid;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace dxshim::devices
