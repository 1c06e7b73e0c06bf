#include "devices/nvidia_answers.h"

#include <yaml-cpp/yaml.h>

#include <sstream>
#include <stdexcept>

#include "devices/device.h"
#include "shim/base/json_text.h"
#include "shim/base/utf8_text.h"

namespace dxshim::devices {
namespace {

void WriteStrings(std::ostringstream& out, const char* key, const std::vector<std::string>& list) {
  out << ", \"" << key << "\": [";
  for (std::size_t i = 0; i < list.size(); ++i) out << (i ? ", " : "") << JsonString(list[i]);
  out << "]";
}

void WriteMap(std::ostringstream& out, const char* key,
              const std::map<std::string, std::string>& map) {
  out << ", \"" << key << "\": {";
  bool first = true;
  for (const auto& [k, v] : map) {
    out << (first ? "" : ", ") << JsonString(k) << ": " << JsonString(v);
    first = false;
  }
  out << "}";
}

[[noreturn]] void Bad(const std::string& what) {
  throw std::runtime_error("the nvidia-uuids answer " + what);
}

YAML::Node Load(std::string_view json, const char* library) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(json));
  } catch (const YAML::Exception& e) {
    Bad("is not JSON: " + std::string(e.what()));
  }
  if (!root.IsMap() || !root[library] || !root[library].IsMap()) {
    Bad(std::string("has no \"") + library + "\" object");
  }
  return root[library];
}

std::string Text(const YAML::Node& map, const char* key) {
  const auto node = map[key];
  if (!node) return "";
  if (!node.IsScalar()) Bad(std::string("has a \"") + key + "\" that is not a string");
  return node.Scalar();
}

std::vector<std::string> Strings(const YAML::Node& map, const char* key) {
  std::vector<std::string> out;
  const auto node = map[key];
  if (!node) return out;
  if (!node.IsSequence()) Bad(std::string("has a \"") + key + "\" that is not a list");
  for (const auto& item : node) {
    if (!item.IsScalar()) Bad(std::string("has a \"") + key + "\" entry that is not a string");
    out.push_back(item.Scalar());
  }
  return out;
}

std::map<std::string, std::string> Map(const YAML::Node& map, const char* key) {
  std::map<std::string, std::string> out;
  const auto node = map[key];
  if (!node) return out;
  if (!node.IsMap()) Bad(std::string("has a \"") + key + "\" that is not an object");
  for (const auto& item : node) {
    if (!item.first.IsScalar() || !item.second.IsScalar()) {
      Bad(std::string("has a \"") + key + "\" value that is not a string");
    }
    out[item.first.Scalar()] = item.second.Scalar();
  }
  return out;
}

std::uint64_t Luid(const std::string& text) {
  try {
    return ParseLuid(text);
  } catch (const std::invalid_argument& e) {
    Bad(std::string("has a device whose LUID ") + e.what());
  }
}

}  // namespace

std::string WriteCudaReport(const CudaReport& report) {
  std::ostringstream out;
  out << "{\"cuda\": {\"error\": " << JsonString(report.error);
  WriteStrings(out, "notes", report.notes);
  out << ", \"devices\": [";
  for (std::size_t i = 0; i < report.devices.size(); ++i) {
    const auto& d = report.devices[i];
    out << (i ? ", " : "") << "{\"ordinal\": " << d.ordinal;
    if (d.error.empty()) {
      out << ", \"luid\": " << JsonString(FormatLuid(d.luid))
          << ", \"uuid\": " << JsonString(d.uuid) << ", \"uuid_call\": " << JsonString(d.uuid_call);
    } else {
      out << ", \"error\": " << JsonString(d.error);
    }
    out << "}";
  }
  out << "]}}\n";
  return out.str();
}

std::string WriteNvmlReport(const NvmlReport& report) {
  std::ostringstream out;
  out << "{\"nvml\": {\"error\": " << JsonString(report.error);
  WriteStrings(out, "notes", report.notes);
  if (report.device_count) out << ", \"device_count\": " << *report.device_count;
  WriteMap(out, "uuids", report.uuids);
  WriteMap(out, "misses", report.misses);
  out << "}}\n";
  return out.str();
}

CudaReport ReadCudaReport(std::string_view json) {
  const auto cuda = Load(json, "cuda");
  CudaReport report;
  report.error = Text(cuda, "error");
  report.notes = Strings(cuda, "notes");
  const auto devices = cuda["devices"];
  if (devices && !devices.IsSequence()) Bad("has \"devices\" that are not a list");
  if (!devices) return report;
  for (const auto& node : devices) {
    if (!node.IsMap()) Bad("has a device that is not an object");
    CudaDeviceAnswer d;
    try {
      d.ordinal = node["ordinal"].as<int>();
    } catch (const YAML::Exception&) {
      Bad("has a device without an ordinal");
    }
    d.error = Text(node, "error");
    if (d.error.empty()) {
      d.luid = Luid(Text(node, "luid"));
      d.uuid = Text(node, "uuid");
      d.uuid_call = Text(node, "uuid_call");
    }
    report.devices.push_back(std::move(d));
  }
  return report;
}

NvmlReport ReadNvmlReport(std::string_view json) {
  const auto nvml = Load(json, "nvml");
  NvmlReport report;
  report.error = Text(nvml, "error");
  report.notes = Strings(nvml, "notes");
  if (const auto count = nvml["device_count"]) {
    try {
      report.device_count = count.as<unsigned>();
    } catch (const YAML::Exception&) {
      Bad("has a device_count that is not a number");
    }
  }
  report.misses = Map(nvml, "misses");
  // What goes into CUDA_VISIBLE_DEVICES is checked here too, whatever the child printed.
  for (auto& [bus_id, uuid] : Map(nvml, "uuids")) {
    if (IsNvmlGpuUuid(uuid)) {
      report.uuids[bus_id] = std::move(uuid);
    } else {
      report.misses[bus_id] = "NVML gave '" + EscapeInvalidUtf8(uuid) + "', not a GPU UUID";
    }
  }
  return report;
}

std::map<std::uint64_t, std::string> CudaUuidsByLuid(const CudaReport& report,
                                                     std::vector<std::string>& debug) {
  std::map<std::uint64_t, std::string> by_luid;
  std::map<std::uint64_t, std::vector<int>> ordinals;
  for (const auto& d : report.devices) {
    const auto which = "CUDA device " + std::to_string(d.ordinal);
    if (!d.error.empty()) {
      debug.push_back(which + ": " + d.error);
      continue;
    }
    if (d.luid == 0) {
      debug.push_back(which + ": no LUID (cuDeviceGetLuid gave zeros)");
      continue;
    }
    // Counted before its UUID is judged: a LUID two devices give names neither, whatever the
    // other one's UUID.
    ordinals[d.luid].push_back(d.ordinal);
    if (!IsNvmlGpuUuid(d.uuid)) {
      debug.push_back(which + ": " + d.uuid_call + " gave '" + EscapeInvalidUtf8(d.uuid) +
                      "', not a GPU UUID");
      continue;
    }
    by_luid.emplace(d.luid, d.uuid);
  }
  for (const auto& [luid, list] : ordinals) {
    if (list.size() < 2) continue;
    std::string names;
    for (const auto ordinal : list) {
      names += (names.empty() ? "" : " and ") + std::to_string(ordinal);
    }
    debug.push_back("CUDA devices " + names + " give one LUID, " + FormatLuid(luid) +
                    ": it names none of them");
    by_luid.erase(luid);
  }
  return by_luid;
}

}  // namespace dxshim::devices
