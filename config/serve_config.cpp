#include "config/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "config/extra_runtime_files_config.h"
#include "devices/inventory_file.h"
#include "devices/node_labels.h"

namespace dxshim::config {
namespace {

using Setter = std::function<void(ServeConfig&, std::string_view)>;

struct Key {
  std::string name;
  Setter set;
};

unsigned ParseCount(std::string_view text) {
  unsigned n = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > 1024) {
    throw ConfigError("'" + std::string(text) + "' is not a number from 1 to 1024");
  }
  return n;
}

// Checked for what can be checked on any platform; Windows parses it when the pipe is created
// and refuses to start with a message naming it if it is not valid SDDL.
std::string ParseSddl(std::string_view text) {
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (!printable || !(text.starts_with("D:") || text.starts_with("O:") || text.starts_with("G:"))) {
    throw ConfigError("'" + std::string(text) +
                      "' is not a security descriptor in SDDL (e.g. D:P(A;;GA;;;SY)(A;;GA;;;BA))");
  }
  return std::string(text);
}

std::uint64_t ParseLogFileSize(std::string_view text) {
  std::uint64_t bytes = 0;
  try {
    bytes = devices::ParseByteQuantity(std::string(text));
  } catch (const std::invalid_argument&) {
    throw ConfigError("'" + std::string(text) + "' is not a size (e.g. 10Mi)");
  }
  if (bytes < (64u << 10)) throw ConfigError("'" + std::string(text) + "' is less than 64Ki");
  return bytes;
}

devices::Placement ParsePlacement(std::string_view text) {
  if (text == "spread") return devices::Placement::kSpread;
  if (text == "pack") return devices::Placement::kPack;
  throw ConfigError("'" + std::string(text) + "' is not spread or pack");
}

// "a, b,c" -> {a, b, c}; each must be a DNS label, as Kubernetes namespace names and RuntimeClass
// handlers are (`what` names which, for the error).
std::vector<std::string> SplitList(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    auto item = text.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const bool valid =
        !item.empty() && item.size() <= 63 && std::all_of(item.begin(), item.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        });
    if (!valid) {
      throw ConfigError("'" + std::string(item) + "' is not a " + std::string(what) +
                        " (a-z, 0-9, '-')");
    }
    out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

std::string ContainerPath(std::string_view text) {
  if (!text.starts_with('/') || text.find("..") != std::string_view::npos) {
    throw ConfigError("'" + std::string(text) + "' is not an absolute path without '..'");
  }
  return std::string(text);
}

const std::vector<Key>& KeyTable() {
  static const std::vector<Key> keys = {
      {"listen", [](ServeConfig& c, std::string_view v) { c.listen = std::string(v); }},
      {"runtime", [](ServeConfig& c, std::string_view v) { c.runtime = std::string(v); }},
      {"socket-mode",
       [](ServeConfig& c, std::string_view v) { c.socket_mode = ParseSocketMode(v); }},
      {"pipe-sddl", [](ServeConfig& c, std::string_view v) { c.pipe_sddl = ParseSddl(v); }},
      {"log-level", [](ServeConfig& c, std::string_view v) { c.log_level = std::string(v); }},
      {"log-file",
       [](ServeConfig& c, std::string_view v) { c.log_file = v == "-" ? "" : std::string(v); }},
      {"log-file-max-size",
       [](ServeConfig& c, std::string_view v) { c.log_file_max_size = ParseLogFileSize(v); }},
      {"log-file-count",
       [](ServeConfig& c, std::string_view v) { c.log_file_count = ParseCount(v); }},
      {"shutdown-grace",
       [](ServeConfig& c, std::string_view v) { c.shutdown_grace = ParseDuration(v); }},
      {"reconnect-backoff-max",
       [](ServeConfig& c, std::string_view v) { c.reconnect_backoff_max = ParseDuration(v); }},
      {"device-source",
       [](ServeConfig& c, std::string_view v) { c.device_source = std::string(v); }},
      {"sysfs-root", [](ServeConfig& c, std::string_view v) { c.sysfs_root = std::string(v); }},
      {"device-refresh",
       [](ServeConfig& c, std::string_view v) { c.device_refresh = ParseDuration(v); }},
      {"include-integrated",
       [](ServeConfig& c, std::string_view v) { c.include_integrated = ParseBool(v); }},
      {"include-detachable",
       [](ServeConfig& c, std::string_view v) { c.include_detachable = ParseBool(v); }},
      {"target", [](ServeConfig& c, std::string_view v) { c.target = ParseTarget(v); }},
      {"max-containers-per-device",
       [](ServeConfig& c, std::string_view v) {
         c.policy.max_containers_per_device = ParseCount(v);
       }},
      {"placement",
       [](ServeConfig& c, std::string_view v) { c.policy.placement = ParsePlacement(v); }},
      {"allow-namespaces",
       [](ServeConfig& c, std::string_view v) {
         c.policy.allow_namespaces = SplitList(v, "namespace name");
       }},
      {"deny-namespaces",
       [](ServeConfig& c, std::string_view v) {
         c.policy.deny_namespaces = SplitList(v, "namespace name");
       }},
      {"resync-interval",
       [](ServeConfig& c, std::string_view v) { c.resync_interval = ParseDuration(v); }},
      {"narrow-class-devices",
       [](ServeConfig& c, std::string_view v) { c.policy.narrow_class_devices = ParseBool(v); }},
      {"vm-runtime-handlers",
       [](ServeConfig& c, std::string_view v) {
         c.vm_runtime_handlers =
             v == "-" ? std::vector<std::string>{} : SplitList(v, "runtime handler name");
       }},
      {"device-plugin", [](ServeConfig& c, std::string_view v) { c.device_plugin = ParseBool(v); }},
      {"device-plugin-dir",
       [](ServeConfig& c, std::string_view v) { c.device_plugin_dir = std::string(v); }},
      {"device-plugin-resource",
       [](ServeConfig& c, std::string_view v) { c.device_plugin_resource = ParseResourceName(v); }},
      {"node-feature-file",
       [](ServeConfig& c, std::string_view v) {
         c.node_feature_file = v == "-" ? "" : std::string(v);
       }},
      {"node-feature-file-remove",
       [](ServeConfig& c, std::string_view v) { c.node_feature_file_remove = ParseBool(v); }},
      {"metrics-listen",
       [](ServeConfig& c, std::string_view v) { c.metrics_listen = ParseMetricsListen(v); }},
      {"linux-system32-path",
       [](ServeConfig& c, std::string_view v) { c.linux_system32_path = ContainerPath(v); }},
      {"linux-syswow64-path",
       [](ServeConfig& c, std::string_view v) { c.linux_syswow64_path = ContainerPath(v); }},
  };
  return keys;
}

// Four decimal octets, "127.0.0.1".
bool IsIpv4Address(std::string_view host) {
  for (int i = 0; i < 4; ++i) {
    const auto dot = host.find('.');
    if ((i < 3) != (dot != std::string_view::npos)) return false;  // exactly three dots
    const auto part = host.substr(0, dot);
    unsigned octet = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), octet);
    if (part.empty() || part.size() > 3 || ec != std::errc() || end != part.data() + part.size() ||
        octet > 255) {
      return false;
    }
    if (dot != std::string_view::npos) host.remove_prefix(dot + 1);
  }
  return true;
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
    if (key == "extra-runtime-files") {
      config.extra_runtime_files = ParseExtraRuntimeFiles(entry.second, "config " + path);
      continue;
    }
    const bool list_key =
        key == "allow-namespaces" || key == "deny-namespaces" || key == "vm-runtime-handlers";
    if (list_key && entry.second.IsSequence()) {
      std::string joined;
      for (const auto& item : entry.second) {
        if (!item.IsScalar())
          throw ConfigError(where.append(": key '").append(key).append("': not a name list"));
        joined += (joined.empty() ? "" : ",") + item.as<std::string>();
      }
      auto& list = key == "allow-namespaces"  ? config.policy.allow_namespaces
                   : key == "deny-namespaces" ? config.policy.deny_namespaces
                                              : config.vm_runtime_handlers;
      if (joined.empty()) {
        list.clear();
      } else {
        ApplyServeKey(config, key, joined, where);
      }
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
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("no port");
  const auto host = text.substr(0, colon);
  const auto port = text.substr(colon + 1);
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || number > 65535) {
    throw bad("the port is not a number from 0 to 65535");
  }
  const bool v6 = host.size() > 2 && host.front() == '[' && host.back() == ']' &&
                  host.find_first_not_of("0123456789abcdefABCDEF:.", 1) == host.size() - 1;
  if (!v6 && !IsIpv4Address(host)) throw bad("the host must be an IP address, not a name");
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

}  // namespace dxshim::config
