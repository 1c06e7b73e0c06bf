#include "config/serve_config_keys.h"

#include <yaml-cpp/yaml.h>

#include "config/extra_runtime_files_config.h"
#include "config/serve_option_table.h"
#include "shim/base/comma_list.h"
#include "shim/base/utf8_text.h"

namespace dxshim::config {
namespace {

// A key as an error message names it: a control character (a NUL would end the message) as
// \xHH, and any byte that is not UTF-8 likewise.
std::string KeyText(std::string_view key) {
  std::string out;
  for (const char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      static const char kHex[] = "0123456789ABCDEF";
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xF]};
    } else {
      out += c;
    }
  }
  return EscapeInvalidUtf8(out);
}

std::string KnownKeys() { return JoinList(ServeKeys(), ", "); }

}  // namespace

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
    throw ConfigError(std::string(source) + ": unknown key '" + KeyText(key) +
                      "' (known keys: " + KnownKeys() + ")");
  }
  if (value.empty()) {
    throw ConfigError(std::string(source) + ": key '" + KeyText(key) + "' is empty");
  }
  try {
    option->set(config, value);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(source) + ": key '" + KeyText(key) + "': " + e.what());
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
      std::vector<std::string> items;
      for (const auto& item : entry.second) {
        if (!item.IsScalar())
          throw ConfigError(
              where.append(": key '").append(KeyText(key)).append("': not a name list"));
        // An empty name would join into "" (read as the empty list, "-") or ",a": refused here.
        if (TrimBlanks(item.Scalar()).empty())
          throw ConfigError(
              where.append(": key '").append(KeyText(key)).append("': an empty name in the list"));
        items.push_back(item.as<std::string>());
      }
      const std::string joined = JoinCommaList(items);
      ApplyServeKey(config, key, joined.empty() ? "-" : joined, where);  // "-": an empty list
      continue;
    }
    if (!entry.second.IsScalar()) {
      throw ConfigError(
          where.append(": key '").append(KeyText(key)).append("' must have a single value"));
    }
    ApplyServeKey(config, key, entry.second.as<std::string>(), where);
  }
}

}  // namespace dxshim::config
