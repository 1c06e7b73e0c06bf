#include "config/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>

namespace dxshim::config {
namespace {

using Setter = std::function<void(ServeConfig&, std::string_view)>;

struct Key {
  std::string name;
  Setter set;
};

const std::vector<Key>& KeyTable() {
  static const std::vector<Key> keys = {
      {"listen", [](ServeConfig& c, std::string_view v) { c.listen = std::string(v); }},
      {"runtime", [](ServeConfig& c, std::string_view v) { c.runtime = std::string(v); }},
      {"socket-mode",
       [](ServeConfig& c, std::string_view v) { c.socket_mode = ParseSocketMode(v); }},
      {"log-level", [](ServeConfig& c, std::string_view v) { c.log_level = std::string(v); }},
      {"shutdown-grace",
       [](ServeConfig& c, std::string_view v) { c.shutdown_grace = ParseDuration(v); }},
      {"reconnect-backoff-max",
       [](ServeConfig& c, std::string_view v) { c.reconnect_backoff_max = ParseDuration(v); }},
  };
  return keys;
}

std::string KnownKeys() {
  std::string out;
  for (const auto& key : KeyTable()) {
    out += (out.empty() ? "" : ", ") + key.name;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& ServeKeys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& key : KeyTable()) out.push_back(key.name);
    return out;
  }();
  return names;
}

void ApplyServeKey(ServeConfig& config, std::string_view key, std::string_view value,
                   std::string_view source) {
  const auto& keys = KeyTable();
  auto it = std::find_if(keys.begin(), keys.end(), [&](const Key& k) { return k.name == key; });
  if (it == keys.end()) {
    throw ConfigError(std::string(source) + ": unknown key '" + std::string(key) +
                      "' (known keys: " + KnownKeys() + ")");
  }
  if (value.empty()) {
    throw ConfigError(std::string(source) + ": key '" + std::string(key) + "' is empty");
  }
  try {
    it->set(config, value);
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
    if (!entry.second.IsScalar()) {
      throw ConfigError(where + ": key '" + key + "' must have a single value");
    }
    ApplyServeKey(config, key, entry.second.as<std::string>(), where);
  }
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
  const std::string bad = "'" + std::string(text) + "' is not a duration such as 500ms, 10s or 2m";
  if (ec != std::errc() || number < 0) throw ConfigError(bad);
  if (unit.empty() || unit == "s") return std::chrono::seconds(number);
  if (unit == "ms") return std::chrono::milliseconds(number);
  if (unit == "m") return std::chrono::minutes(number);
  throw ConfigError(bad);
}

}  // namespace dxshim::config
