#include "config/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "config/extra_runtime_files_config.h"
#include "config/serve_option_table.h"
#include "devices/node_labels.h"
#include "shim/base/host_port.h"

namespace dxshim::config {
namespace {

std::string KnownKeys() {
  std::string out;
  for (const auto& key : ServeKeys()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

}  // namespace

ServeConfig::ServeConfig() {
  for (const auto& option : ServeOptions()) {
    if (option.set) option.set(*this, PlatformDefault(option));
  }
}

const std::vector<std::string>& ServeKeys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& option : ServeOptions()) {
      if (option.set) out.emplace_back(option.key);
    }
    return out;
  }();
  return names;
}

void ApplyServeKey(ServeConfig& config, std::string_view key, std::string_view value,
                   std::string_view source) {
  const auto* option = FindServeOption(key);
  if (!option || !option->set) {
    throw ConfigError(std::string(source) + ": unknown key '" + std::string(key) +
                      "' (known keys: " + KnownKeys() + ")");
  }
  if (value.empty()) {
    throw ConfigError(std::string(source) + ": key '" + std::string(key) + "' is empty");
  }
  try {
    option->set(config, value);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(source) + ": key '" + std::string(key) + "': " + e.what());
  }
}

void ApplyServeConfigFile(ServeConfig& config, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError("config " + path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    throw ConfigError("config " + path + ": line " + std::to_string(e.mark.line + 1) +
                      ": invalid YAML: " + e.msg);
  }
  if (root.IsNull()) return;  // an empty file keeps the defaults
  if (!root.IsMap()) {
    throw ConfigError("config " + path + ": the top level must be a mapping of keys to values");
  }
  for (const auto& entry : root) {
    std::string where = "config " + path;
    where += " line " + std::to_string(entry.first.Mark().line + 1);
    if (!entry.first.IsScalar()) throw ConfigError(where + ": a key must be a plain string");
    const auto key = entry.first.as<std::string>();
    if (key == "extra-runtime-files") {
      config.extra_runtime_files = ParseExtraRuntimeFiles(entry.second, "config " + path);
      continue;
    }
    const auto* option = FindServeOption(key);
    if (option && std::string_view(option->type) == "list" && entry.second.IsSequence()) {
      std::string joined;
      for (const auto& item : entry.second) {
        if (!item.IsScalar())
          throw ConfigError(where.append(": key '").append(key).append("': not a name list"));
        joined += (joined.empty() ? "" : ",") + item.as<std::string>();
      }
      ApplyServeKey(config, key, joined.empty() ? "-" : joined, where);  // "-": an empty list
      continue;
    }
    if (!entry.second.IsScalar()) {
      throw ConfigError(where.append(": key '").append(key).append("' must have a single value"));
    }
    ApplyServeKey(config, key, entry.second.as<std::string>(), where);
  }
}

bool ParseBool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  throw ConfigError("'" + std::string(text) + "' is not true or false");
}

std::string ParseMetricsListen(std::string_view text) {
  if (text.empty() || text == "-") return "";
  const auto bad = [text](const char* why) {
    std::string message(1, '\'');
    message.append(text).append("' is not HOST:PORT for the metrics endpoint (").append(why);
    return ConfigError(message.append("), e.g. 127.0.0.1:9464 or [::1]:9464"));
  };
  if (text.starts_with("unix:")) {
    throw bad("unix sockets are not served: Prometheus and kubelet's probes speak TCP");
  }
  const auto parsed = ParseHostPort(text);
  if (const auto* why = std::get_if<std::string>(&parsed)) throw bad(why->c_str());
  const auto& address = std::get<HostPort>(parsed);
  const bool ip =
      address.bracketed ? LooksLikeIpv6Address(address.host) : IsIpv4Address(address.host);
  if (!ip) throw bad("the host must be an IP address, not a name");
  return std::string(text);
}

std::string ParseResourceName(std::string_view text) {
  const auto slash = text.find('/');
  const auto domain = slash == std::string_view::npos ? std::string_view() : text.substr(0, slash);
  const bool reserved = domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
  if (domain.empty() || reserved || !devices::IsLabelKey(text)) {
    throw ConfigError("'" + std::string(text) +
                      "' is not an extended resource name such as dxshim.io/gpu (a domain outside "
                      "kubernetes.io, '/', a name of [A-Za-z0-9-_.])");
  }
  return std::string(text);
}

const char* ToString(Target t) { return t == Target::kWindows ? "windows" : "linux"; }

Target ParseTarget(std::string_view text) {
  if (text == "windows") return Target::kWindows;
  if (text == "linux") return Target::kLinux;
  throw ConfigError("'" + std::string(text) + "' is not windows or linux");
}

std::uint32_t ParseSocketMode(std::string_view text) {
  std::uint32_t mode = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, mode, 8);
  if (ec != std::errc() || ptr != end || mode > 0777) {
    throw ConfigError("'" + std::string(text) + "' is not an octal file mode such as 0660");
  }
  return mode;
}

std::chrono::milliseconds ParseDuration(std::string_view text) {
  std::int64_t number = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  // Built only when thrown, by appending: GCC 12 at -O3 reports a false -Werror=restrict for
  // `"'" + std::string(text)` here (Linux Release and the mingw build alike).
  const auto bad = [text] {
    std::string message(1, '\'');
    message.append(text).append("' is not a duration such as 500ms, 10s or 2m");
    return ConfigError(message);
  };
  if (ec != std::errc() || number < 0) throw bad();
  if (unit.empty() || unit == "s") return std::chrono::seconds(number);
  if (unit == "ms") return std::chrono::milliseconds(number);
  if (unit == "m") return std::chrono::minutes(number);
  throw bad();
}

void CheckServeConfig(const ServeConfig& cfg) {
  if (!cfg.device_plugin_memory_resource.empty() &&
      cfg.device_plugin_memory_resource == cfg.device_plugin_resource) {
    throw ConfigError(
        "keys 'device-plugin-resource' and 'device-plugin-memory-resource' both "
        "name '" +
        cfg.device_plugin_resource +
        "': kubelet takes one device plugin per resource; give the memory resource "
        "another name, or '-' for none");
  }
}

}  // namespace dxshim::config
