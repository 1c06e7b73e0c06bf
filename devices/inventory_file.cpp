#include "devices/inventory_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "devices/byte_quantity.h"
#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"
#include "shim/base/utf8_text.h"

namespace dxshim::devices {
namespace {

// Why `s` cannot be a text field: inventory text must be valid UTF-8 (what every CRI string field
// must hold: shim/base/utf8_text.h) without control characters, so that whatever is loaded can be
// written back unchanged, shown to an operator, and put into a CreateContainer request.
std::optional<std::string> BadText(const std::string& s) {
  if (auto why = Utf8Problem(s)) return why;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "contains a control character";
  }
  return std::nullopt;
}

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& field,
                         const std::string& why) const {
    std::string where = "inventory " + origin_;
    if (at.IsDefined()) where += " line " + std::to_string(at.Mark().line + 1);
    // Escaped: a key or a number in the file may hold bytes that are not UTF-8 either.
    throw InventoryError(EscapeInvalidUtf8(where + ": " + field + ": " + why));
  }

  void OnlyKeys(const YAML::Node& map, const std::string& field,
                const std::set<std::string>& allowed) const {
    if (!map.IsMap()) Fail(map, field, "must be a mapping");
    for (const auto& kv : map) {
      const auto key = kv.first.Scalar();
      if (!allowed.count(key)) {
        std::string known;
        for (const auto& a : allowed) {
          if (!known.empty()) known += ", ";
          known += a;
        }
        Fail(kv.first, field.empty() ? key : field + "." + key,
             "unknown key (known: " + known + ")");
      }
    }
  }

  std::string String(const YAML::Node& map, const std::string& key, const std::string& field,
                     bool required) const {
    const auto node = map[key];
    if (!node.IsDefined() || node.IsNull()) {
      if (required) Fail(map, field + "." + key, "is required");
      return "";
    }
    if (!node.IsScalar()) Fail(node, field + "." + key, "must be a string");
    if (auto why = BadText(node.Scalar())) Fail(node, field + "." + key, *why);
    return node.Scalar();
  }

  bool Bool(const YAML::Node& map, const std::string& key, const std::string& field,
            bool fallback) const {
    const auto node = map[key];
    if (!node.IsDefined() || node.IsNull()) return fallback;
    if (node.IsScalar()) {
      if (node.Scalar() == "true") return true;
      if (node.Scalar() == "false") return false;
    }
    Fail(node, field + "." + key, "must be true or false");
  }

  // Decimal, or hexadecimal with 0x; at most `max`.
  std::uint64_t Number(const YAML::Node& map, const std::string& key, const std::string& field,
                       std::uint64_t max, bool required) const {
    const auto node = map[key];
    if (!node.IsDefined() || node.IsNull()) {
      if (required) Fail(map, field + "." + key, "is required");
      return 0;
    }
    if (!node.IsScalar()) Fail(node, field + "." + key, "must be a number");
    const auto& text = node.Scalar();
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    std::uint64_t value = 0;
    const char* begin = text.data() + (hex ? 2 : 0);
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, value, hex ? 16 : 10);
    if (ec != std::errc() || ptr != end || begin == end) {
      Fail(node, field + "." + key, "'" + text + "' is not a number (decimal or 0x hex)");
    }
    if (value > max) Fail(node, field + "." + key, "'" + text + "' is too large");
    return value;
  }

  // A LUID in any spelling ParseLuid reads (0x00000000_0x0000D1A2, the earlier
  // 0x00000000:0x0000d1a2, one 0x number), or a decimal number as inventories were once read.
  std::uint64_t Luid(const YAML::Node& map, const std::string& field) const {
    const auto node = map["luid"];
    if (!node.IsDefined() || node.IsNull()) return 0;
    if (!node.IsScalar()) {
      Fail(node, field + ".luid", std::string("must be a LUID (") + kLuidForm + ")");
    }
    const auto& text = node.Scalar();
    if (!text.empty() &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Number(map, "luid", field, UINT64_MAX, false);
    }
    try {
      return ParseLuid(text);
    } catch (const std::invalid_argument& e) {
      Fail(node, field + ".luid", e.what());
    }
  }

  std::vector<RuntimeFile> Files(const YAML::Node& list, const std::string& field) const {
    std::vector<RuntimeFile> out;
    if (!list.IsDefined() || list.IsNull()) return out;
    if (!list.IsSequence()) Fail(list, field, "must be a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto entry = list[i];
      const auto f = field + "[" + std::to_string(i) + "]";
      OnlyKeys(entry, f, {"source", "destination"});
      std::vector<std::string> strings = {String(entry, "source", f, true)};
      const auto destination = String(entry, "destination", f, false);
      if (!destination.empty()) strings.push_back(destination);
      try {
        auto file = ParseCopyToVmValue(strings);
        for (const auto& existing : out) {
          if (EqualsIgnoreCase(existing.destination, file.destination)) {
            Fail(entry, f, "destination '" + file.destination + "' is listed twice");
          }
        }
        out.push_back(std::move(file));
      } catch (const std::invalid_argument& e) {
        Fail(entry, f, e.what());
      }
    }
    return out;
  }

  Device ReadDevice(const YAML::Node& node, const std::string& field) const {
    OnlyKeys(node, field,
             {"id", "luid", "locationPath", "description", "vendor", "vendorId", "deviceId",
              "subsystemId", "revision", "class", "integrated", "detachable", "dedicatedMemory",
              "driverVersion", "uuid", "driverStore", "driverKey", "present", "runtimeFiles"});
    Device d;
    d.id = String(node, "id", field, true);
    if (d.id.empty()) Fail(node["id"], field + ".id", "is empty");
    d.luid = Luid(node, field);
    d.location_path = String(node, "locationPath", field, true);
    if (d.location_path.empty()) Fail(node["locationPath"], field + ".locationPath", "is empty");
    d.description = String(node, "description", field, false);
    d.vendor = String(node, "vendor", field, false);
    d.vendor_id = static_cast<std::uint16_t>(Number(node, "vendorId", field, 0xffff, true));
    d.device_id = static_cast<std::uint16_t>(Number(node, "deviceId", field, 0xffff, false));
    d.subsystem_id =
        static_cast<std::uint32_t>(Number(node, "subsystemId", field, 0xffffffffu, false));
    d.revision = static_cast<std::uint8_t>(Number(node, "revision", field, 0xff, false));
    const auto cls = String(node, "class", field, true);
    if (cls == "display") {
      d.device_class = DeviceClass::kDisplay;
    } else if (cls == "compute") {
      d.device_class = DeviceClass::kCompute;
    } else {
      Fail(node["class"], field + ".class", "'" + cls + "' is not display or compute");
    }
    d.integrated = Bool(node, "integrated", field, false);
    d.detachable = Bool(node, "detachable", field, false);
    const auto memory = node["dedicatedMemory"];
    if (memory.IsDefined() && !memory.IsNull()) {
      if (!memory.IsScalar()) Fail(memory, field + ".dedicatedMemory", "must be a quantity");
      try {
        d.dedicated_memory = ParseByteQuantity(memory.Scalar());
      } catch (const std::invalid_argument& e) {
        Fail(memory, field + ".dedicatedMemory", e.what());
      }
    }
    d.driver_version = String(node, "driverVersion", field, false);
    d.uuid = String(node, "uuid", field, false);
    if (!d.uuid.empty() && !IsNvmlGpuUuid(d.uuid)) {
      Fail(node["uuid"], field + ".uuid",
           "'" + d.uuid +
               "' is not an NVML GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lower-case "
               "hex)");
    }
    d.driver_store = String(node, "driverStore", field, false);
    d.driver_key = String(node, "driverKey", field, false);
    d.present = Bool(node, "present", field, true);
    const auto files = node["runtimeFiles"];
    if (files.IsDefined() && !files.IsNull()) {
      OnlyKeys(files, field + ".runtimeFiles", {"system32", "syswow64"});
      d.system32 = Files(files["system32"], field + ".runtimeFiles.system32");
      d.syswow64 = Files(files["syswow64"], field + ".runtimeFiles.syswow64");
      if ((!d.system32.empty() || !d.syswow64.empty()) && d.driver_store.empty()) {
        Fail(node, field + ".driverStore", "is required when runtimeFiles are listed");
      }
    }
    return d;
  }

 private:
  std::string origin_;
};

}  // namespace

std::vector<Device> ParseInventory(const std::string& text, const std::string& origin) {
  Reader reader(origin);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InventoryError("inventory " + origin + " line " + std::to_string(e.mark.line + 1) +
                         ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) reader.Fail(root, "(top level)", "must be a mapping with a 'devices' list");
  reader.OnlyKeys(root, "", {"devices"});
  const auto list = root["devices"];
  if (!list.IsDefined() || !list.IsSequence()) reader.Fail(root, "devices", "must be a list");
  std::vector<Device> devices;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto field = "devices[" + std::to_string(i) + "]";
    auto device = reader.ReadDevice(list[i], field);
    for (const auto& other : devices) {
      if (other.id == device.id)
        reader.Fail(list[i]["id"], field + ".id", "duplicate id " + device.id);
      if (EqualsIgnoreCase(other.location_path, device.location_path)) {
        reader.Fail(list[i]["locationPath"], field + ".locationPath",
                    "duplicate location path " + device.location_path);
      }
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

std::vector<Device> LoadInventoryFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InventoryError("inventory " + path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseInventory(text.str(), path);
}

std::string WriteInventoryYaml(const std::vector<Device>& devices) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const auto& d : devices) {
    out << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << YAML::SingleQuoted << d.id;
    out << YAML::Key << "luid" << YAML::Value << FormatLuid(d.luid);
    out << YAML::Key << "locationPath" << YAML::Value << YAML::SingleQuoted << d.location_path;
    out << YAML::Key << "description" << YAML::Value << d.description;
    out << YAML::Key << "vendor" << YAML::Value << d.vendor;
    out << YAML::Key << "vendorId" << YAML::Value << HexNumber(d.vendor_id, 4);
    out << YAML::Key << "deviceId" << YAML::Value << HexNumber(d.device_id, 4);
    out << YAML::Key << "subsystemId" << YAML::Value << HexNumber(d.subsystem_id, 8);
    out << YAML::Key << "revision" << YAML::Value << HexNumber(d.revision, 2);
    out << YAML::Key << "class" << YAML::Value << ToString(d.device_class);
    out << YAML::Key << "integrated" << YAML::Value << d.integrated;
    out << YAML::Key << "detachable" << YAML::Value << d.detachable;
    out << YAML::Key << "dedicatedMemory" << YAML::Value << d.dedicated_memory;
    out << YAML::Key << "driverVersion" << YAML::Value << YAML::SingleQuoted << d.driver_version;
    if (!d.uuid.empty()) out << YAML::Key << "uuid" << YAML::Value << d.uuid;
    out << YAML::Key << "driverStore" << YAML::Value << YAML::SingleQuoted << d.driver_store;
    out << YAML::Key << "driverKey" << YAML::Value << YAML::SingleQuoted << d.driver_key;
    out << YAML::Key << "present" << YAML::Value << d.present;
    out << YAML::Key << "runtimeFiles" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, files] :
         {std::pair{"system32", &d.system32}, {"syswow64", &d.syswow64}}) {
      out << YAML::Key << name << YAML::Value << YAML::BeginSeq;
      for (const auto& f : *files) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "source" << YAML::Value << f.source
            << YAML::Key << "destination" << YAML::Value << f.destination << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace dxshim::devices
