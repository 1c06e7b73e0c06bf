#include "config/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "devices/node_labels.h"
#include "shim/base/host_port.h"

namespace dxshim::config {

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
  // At most a day: no interval dxshim waits is longer, and a larger count would overflow once
  // converted (to milliseconds here, to the clocks' nanoseconds where it is waited for).
  constexpr std::chrono::milliseconds kLongest = std::chrono::hours(24);
  const auto of = [&](std::chrono::milliseconds one) {
    if (number > kLongest / one) {
      std::string message(1, '\'');
      message.append(text).append(
          "' is longer than 24h (1440m), the longest duration dxshim takes");
      throw ConfigError(message);
    }
    return one * number;
  };
  if (unit.empty() || unit == "s") return of(std::chrono::seconds(1));
  if (unit == "ms") return of(std::chrono::milliseconds(1));
  if (unit == "m") return of(std::chrono::minutes(1));
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
