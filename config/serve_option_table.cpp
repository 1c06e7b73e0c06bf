// The table of serve's options (each key, its help and its defaults) and --help's text; a key's
// default on this platform is serve_option_default_windows.cpp's or _posix.cpp's.
#include "config/serve_option_table.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "config/serve_defaults.h"
#include "devices/allocation/gpu_memory.h"
#include "devices/byte_quantity.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim::config {
namespace {

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
    throw ConfigError("'" + std::string(text) + "' is not a security descriptor in SDDL (e.g. " +
                      kDefaultPipeSddl + ")");
  }
  return std::string(text);
}

// A byte quantity (devices/byte_quantity.h), at least 64Ki.
std::uint64_t ParseLogFileSize(std::string_view text) {
  std::uint64_t bytes = 0;
  try {
    bytes = devices::ParseByteQuantity(std::string(text));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
  if (bytes < (64u << 10)) throw ConfigError("'" + std::string(text) + "' is less than 64Ki");
  return bytes;
}

// An amount of GPU memory (the gpu-memory settings), as the dxshim.io/gpu-memory annotation is one
// and with its errors: devices::ParseGpuMemory, at least 1Mi; zero only where `zero` allows.
std::uint64_t ParseMemorySize(std::string_view text, devices::ZeroGpuMemory zero) {
  try {
    return devices::ParseGpuMemory(std::string(text), zero);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("'" + std::string(text) + "' " + e.what());
  }
}

// "auto" (0: the capacity divided by max-containers-per-device) or an amount of at least 1Mi.
std::uint64_t ParseDefaultGpuMemory(std::string_view text) {
  if (text == "auto") return 0;
  return ParseMemorySize(text, devices::ZeroGpuMemory::kRefused);
}

std::string Size(std::uint64_t bytes) { return std::to_string(bytes); }

devices::SpreadOrPack ParseSpreadOrPack(std::string_view text) {
  if (text == "spread") return devices::SpreadOrPack::kSpread;
  if (text == "pack") return devices::SpreadOrPack::kPack;
  throw ConfigError("'" + std::string(text) + "' is not spread or pack");
}

// "a, b,c" -> {a, b, c}; each must be a DNS label, as Kubernetes namespace names and RuntimeClass
// handlers are (`what` names which, for the error).
std::vector<std::string> SplitList(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  for (const auto item : SplitCommaList(text)) {
    const bool valid =
        !item.empty() && item.size() <= 63 && std::all_of(item.begin(), item.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        });
    if (!valid) {
      throw ConfigError("'" + std::string(item) + "' is not a " + std::string(what) +
                        " (a-z, 0-9, '-')");
    }
    out.emplace_back(item);
  }
  return out;
}

std::string ContainerPath(std::string_view text) {
  if (!text.starts_with('/') || text.find("..") != std::string_view::npos) {
    throw ConfigError("'" + std::string(text) + "' is not an absolute path without '..'");
  }
  return std::string(text);
}

// "-" for an empty list, else SplitList.
std::vector<std::string> ListOrNone(std::string_view text, std::string_view what) {
  return text == "-" ? std::vector<std::string>{} : SplitList(text, what);
}

std::string Text(std::string_view v) { return std::string(v); }
std::string TextOrNone(std::string_view v) { return v == "-" ? "" : std::string(v); }
std::string Bool(bool b) { return b ? "true" : "false"; }
std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

using C = ServeConfig;
using V = std::string_view;

const std::vector<ServeOption> kOptions = {
    {"listen", "endpoint", "unix:///run/dxshim/dxshim.sock", "npipe://./pipe/dxshim", "",
     "where kubelet connects: `unix:///path` or an absolute path (Linux), "
     "`npipe://./pipe/<name>` (Windows), or `tcp://host:port`",
     false, [](C& c, V v) { c.listen = Text(v); }, nullptr},
    {"runtime", "endpoint", "unix:///run/containerd/containerd.sock",
     "npipe://./pipe/containerd-containerd", "", "the runtime to relay to (same forms)", true,
     [](C& c, V v) { c.runtime = Text(v); }, [](const C& c) { return c.runtime; }},
    {"socket-mode", "octal", "0660", nullptr, "", "file mode of the listening unix socket", false,
     [](C& c, V v) { c.socket_mode = ParseSocketMode(v); }, nullptr},
    {"pipe-sddl", "sddl", kDefaultPipeSddl, nullptr, "",
     "Windows: who may open the listening pipe (SDDL; default SYSTEM and Administrators only)",
     false, [](C& c, V v) { c.pipe_sddl = ParseSddl(v); }, nullptr},
    {"log-level", "level", "info", nullptr, "",
     "`trace`, `debug` (one line per failed call), `info`, `warn`, `error`, `critical`, `off`",
     true, [](C& c, V v) { c.log_level = Text(v); }, [](const C& c) { return c.log_level; }},
    {"log-file", "path", "-", "C:\\ProgramData\\dxshim\\dxshim.log", "stderr",
     "log to this file (its directory is created), or `-` for stderr", false,
     [](C& c, V v) { c.log_file = TextOrNone(v); }, nullptr},
    {"log-file-max-size", "size", "10Mi", nullptr, "",
     "rotate the log file at this size (`FILE.log` → `FILE.1.log` …; at least `64Ki`)", false,
     [](C& c, V v) { c.log_file_max_size = ParseLogFileSize(v); }, nullptr},
    {"log-file-count", "count", "5", nullptr, "", "rotated files kept besides the current one",
     false, [](C& c, V v) { c.log_file_count = ParseCount(v); }, nullptr},
    {"shutdown-grace", "duration", "10s", nullptr, "",
     "how long unary calls in flight may take to finish after SIGTERM/SIGINT", false,
     [](C& c, V v) { c.shutdown_grace = ParseDuration(v); }, nullptr},
    {"reconnect-backoff-max", "duration", "2s", nullptr, "",
     "longest wait between reconnection attempts to the runtime", false,
     [](C& c, V v) { c.reconnect_backoff_max = ParseDuration(v); }, nullptr},
    {"device-source", "source", "auto", nullptr, "",
     "`auto` (this platform's discovery), `linux`, `windows` (Windows build), `inventory:PATH`",
     true, [](C& c, V v) { c.device_source = Text(v); },
     [](const C& c) { return c.device_source; }},
    {"sysfs-root", "path", "/sys", nullptr, "", "sysfs for the `linux` source", true,
     [](C& c, V v) { c.sysfs_root = Text(v); }, [](const C& c) { return c.sysfs_root; }},
    {"device-refresh", "duration", "10s", nullptr, "",
     "how often the source is checked for changes (hot-plug, a new inventory file)", true,
     [](C& c, V v) { c.device_refresh = ParseDuration(v); },
     [](const C& c) { return Millis(c.device_refresh); }},
    {"include-integrated", "bool", "false", nullptr, "", "hand out integrated GPUs too", true,
     [](C& c, V v) { c.include_integrated = ParseBool(v); },
     [](const C& c) { return Bool(c.include_integrated); }},
    {"include-detachable", "bool", "false", nullptr, "", "hand out detachable (external) GPUs too",
     true, [](C& c, V v) { c.include_detachable = ParseBool(v); },
     [](const C& c) { return Bool(c.include_detachable); }},
    {"extra-runtime-files", "mapping", "[]", nullptr, "",
     "(file only) runtime files per vendor, added after the driver's own list", false, nullptr,
     nullptr},
    {"max-containers-per-device", "count", "1", nullptr, "",
     "pods one GPU may serve at once (1: every pod gets its GPUs alone)", true,
     [](C& c, V v) { c.policy.max_containers_per_device = ParseCount(v); },
     [](const C& c) { return std::to_string(c.policy.max_containers_per_device); }},
    {"default-gpu-memory", "size", "auto", nullptr, "",
     "GPU memory a shared pod reserves on each GPU when it names none (`dxshim.io/gpu-memory`); "
     "`auto`: the GPU's capacity divided by `max-containers-per-device`, which admits what a "
     "count of pods admits",
     true, [](C& c, V v) { c.policy.default_gpu_memory = ParseDefaultGpuMemory(v); },
     [](const C& c) {
       return c.policy.default_gpu_memory ? Size(c.policy.default_gpu_memory) : std::string("auto");
     }},
    {"gpu-memory-reserved", "size", "0", nullptr, "",
     "GPU memory kept for the host on each GPU (a desktop, the driver): pods share the dedicated "
     "memory less this",
     true,
     [](C& c, V v) {
       c.policy.gpu_memory_reserved = ParseMemorySize(v, devices::ZeroGpuMemory::kAllowed);
     },
     [](const C& c) { return Size(c.policy.gpu_memory_reserved); }},
    {"gpu-memory-unit", "size", "1Gi", nullptr, "",
     "GPU memory per device of the memory resource (`device-plugin-memory-resource`): a GPU "
     "with 16Gi to share is advertised as 16 devices at `1Gi`",
     true,
     [](C& c, V v) {
       const auto unit = ParseMemorySize(v, devices::ZeroGpuMemory::kRefused);
       // A unit count (at most 2^20 ids in an annotation) times the unit must not overflow.
       if (unit > (std::uint64_t{1} << 40)) {
         throw ConfigError("'" + std::string(v) + "' is more than 1Ti, larger than any GPU");
       }
       c.policy.gpu_memory_unit = unit;
     },
     [](const C& c) { return Size(c.policy.gpu_memory_unit); }},
    {"placement", "placement", "spread", nullptr, "",
     "`spread` (the matching GPU with the most free memory first) or `pack` (the one with the "
     "least free memory that still fits)",
     false, [](C& c, V v) { c.policy.spread_or_pack = ParseSpreadOrPack(v); }, nullptr},
    {"allow-namespaces", "list", "-", nullptr, "all",
     "namespaces whose pods may request GPUs (comma list or YAML list; `-` for all)", false,
     [](C& c, V v) { c.policy.allow_namespaces = ListOrNone(v, "namespace name"); }, nullptr},
    {"deny-namespaces", "list", "-", nullptr, "none",
     "namespaces whose pods may not (wins over the allow list; `-` for none)", false,
     [](C& c, V v) { c.policy.deny_namespaces = ListOrNone(v, "namespace name"); }, nullptr},
    {"resync-interval", "duration", "30s", nullptr, "",
     "how often the allocation ledger is rebuilt from the runtime", true,
     [](C& c, V v) { c.resync_interval = ParseDuration(v); },
     [](const C& c) { return Millis(c.resync_interval); }},
    {"narrow-class-devices", "bool", "false", nullptr, "",
     "narrow a `class/<GUID>` device kubelet assigned to one allocated GPU", false,
     [](C& c, V v) { c.policy.narrow_class_devices = ParseBool(v); }, nullptr},
    // Hyper-V isolation: the handler containerd's default Windows configuration names for it
    // (hcsshim gives GPUs to process-isolated containers only, microsoft/hcsshim#1902).
    {"vm-runtime-handlers", "list", "-", "runhcs-wcow-hypervisor", "none",
     "runtime handlers (RuntimeClass handlers) that run pods in VMs: a GPU request in such a pod "
     "fails with `FAILED_PRECONDITION` (comma list or YAML list; `-` for none)",
     false, [](C& c, V v) { c.vm_runtime_handlers = ListOrNone(v, "runtime handler name"); },
     nullptr},
    {"device-plugin", "bool", "true", nullptr, "",
     "serve kubelet's device plugin API (a child process, `dxshim device-plugin`; on Windows "
     "over the AF_UNIX bridge, \"Windows nodes\")",
     false, [](C& c, V v) { c.device_plugin = ParseBool(v); }, nullptr},
    {"device-plugin-after-kubelet", "bool", "false", "true", "",
     "start the device plugin, and so advertise GPUs to the scheduler, only once kubelet has made "
     "a CRI call through dxshim (a client of its pipe whose program is `kubelet.exe`): no pod is "
     "scheduled for dxshim's GPUs before kubelet's containers go through dxshim (Windows only: "
     "dxshim knows its pipe's clients there; ignored on Linux)",
     false, [](C& c, V v) { c.device_plugin_after_kubelet = ParseBool(v); }, nullptr},
    {"device-plugin-dir", "path", "/var/lib/kubelet/device-plugins",
     "C:\\var\\lib\\kubelet\\device-plugins", "",
     "kubelet's device-plugin directory (its `kubelet.sock`; dxshim's sockets are `dxshim.sock` "
     "and `dxshim-memory.sock` there, on Windows `dxshim-<unix ms>.sock` and "
     "`dxshim-memory-<unix ms>.sock`, fresh names each time it serves)",
     true, [](C& c, V v) { c.device_plugin_dir = Text(v); },
     [](const C& c) { return c.device_plugin_dir; }},
    {"device-plugin-resource", "resource", keys::kGpuResource, nullptr, "",
     "the extended resource advertised, one device per pod slot", true,
     [](C& c, V v) { c.device_plugin_resource = ParseResourceName(v); },
     [](const C& c) { return c.device_plugin_resource; }},
    {"device-plugin-memory-resource", "resource", keys::kGpuMemoryResource, nullptr, "",
     "the second extended resource advertised, one device per `gpu-memory-unit` of each GPU's "
     "capacity (`-` for none)",
     true,
     [](C& c, V v) {
       c.device_plugin_memory_resource = v == "-" ? std::string() : ParseResourceName(v);
     },
     [](const C& c) {
       return c.device_plugin_memory_resource.empty() ? std::string("-")
                                                      : c.device_plugin_memory_resource;
     }},
    {"node-feature-file", "path", "-", nullptr, "none",
     "keep this Node Feature Discovery feature file with the node's GPU labels", false,
     [](C& c, V v) { c.node_feature_file = TextOrNone(v); }, nullptr},
    {"node-feature-file-remove", "bool", "false", nullptr, "",
     "remove the feature file when dxshim stops", false,
     [](C& c, V v) { c.node_feature_file_remove = ParseBool(v); }, nullptr},
    {"metrics-listen", "address", "-", nullptr, "none",
     "serve `/metrics` (Prometheus), `/healthz` and `/readyz` over HTTP on `HOST:PORT` (an IP "
     "address; port `0` picks one)",
     false, [](C& c, V v) { c.metrics_listen = ParseMetricsListen(v); }, nullptr},
    {"target", "target", "linux", "windows", "",
     "`windows` or `linux`: how devices enter a container", false,
     [](C& c, V v) { c.target = ParseTarget(v); }, nullptr},
    {"linux-system32-path", "path", kDefaultLinuxSystem32Path, nullptr, "",
     "`linux` target: where a device's System32 runtime files appear", false,
     [](C& c, V v) { c.linux_system32_path = ContainerPath(v); }, nullptr},
    {"linux-syswow64-path", "path", kDefaultLinuxSyswow64Path, nullptr, "",
     "`linux` target: where its SysWOW64 runtime files appear", false,
     [](C& c, V v) { c.linux_syswow64_path = ContainerPath(v); }, nullptr},
};

}  // namespace

const std::vector<ServeOption>& ServeOptions() { return kOptions; }

const ServeOption* FindServeOption(std::string_view key) {
  for (const auto& option : kOptions) {
    if (key == option.key) return &option;
  }
  return nullptr;
}

std::string HelpText(const ServeOption& option) {
  std::string help;
  for (const char* c = option.help; *c; ++c) {
    if (*c != '`') help += *c;
  }
  const char* value = PlatformDefault(option);
  help.append(" (default: ").append(value);
  if (*option.default_note && value == option.linux_default) {
    help.append(", ").append(option.default_note);
  }
  return help + ")";
}

std::string ReferenceRow(const ServeOption& option) {
  std::string row = "| `" + std::string(option.key) + "` | `" + option.linux_default + "`";
  if (*option.default_note) row.append(" (").append(option.default_note).append(")");
  if (option.windows_default) row.append("; Windows: `").append(option.windows_default) += '`';
  return row.append(" | ").append(option.help).append(" |");
}

std::vector<std::string> PluginKeys() {
  std::vector<std::string> keys;
  for (const auto& option : kOptions) {
    if (option.to_plugin) keys.emplace_back(option.key);
  }
  return keys;
}

std::vector<std::string> PluginArgs(const ServeConfig& cfg) {
  std::vector<std::string> args = {"device-plugin"};
  for (const auto& option : kOptions) {
    if (!option.to_plugin) continue;
    args.push_back(std::string("--") + option.key);
    args.push_back(option.get(cfg));
  }
  return args;
}

// The defaults are the table's: each key's, for this platform.
ServeConfig::ServeConfig() {
  for (const auto& option : ServeOptions()) {
    if (option.set) option.set(*this, PlatformDefault(option));
  }
}

}  // namespace dxshim::config
