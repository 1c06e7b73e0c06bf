// Configuration of `dxshim serve`. One table of keys (serve_option_table.h) serves both sources: a
// YAML file uses the long flag names as keys, and command-line flags override the file key by key.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/vendor_runtime_files.h"

namespace dxshim::config {

// How devices are put into a container: Windows (vpci-location-path devices, file mounts into
// C:\Windows\System32 and SysWOW64) or Linux (device nodes, file mounts into configured paths).
enum class Target { kWindows, kLinux };
const char* ToString(Target t);
Target ParseTarget(std::string_view text);

// Each key's meaning, kind and default (per platform) is in the option table
// (serve_option_table.h); a default-constructed ServeConfig holds the table's defaults for the
// platform it was built for.
struct ServeConfig {
  ServeConfig();

  std::string listen;
  std::string runtime;
  std::uint32_t socket_mode = 0;
  std::string pipe_sddl;
  std::string log_level;
  // Empty (written "-"): log to stderr. Otherwise a file, rotated at log_file_max_size keeping
  // log_file_count older files (FILE.1 ... FILE.N). A Windows service has no stderr, hence its
  // default.
  std::string log_file;
  std::uint64_t log_file_max_size = 0;
  unsigned log_file_count = 0;
  std::chrono::milliseconds shutdown_grace{0};
  std::chrono::milliseconds reconnect_backoff_max{0};

  // Devices: where they come from and which are handed out.
  std::string device_source;
  std::string sysfs_root;
  std::chrono::milliseconds device_refresh{0};
  bool include_integrated = false;
  bool include_detachable = false;
  // File only (a list of mappings): the operator's runtime files per vendor.
  std::vector<devices::VendorRuntimeFiles> extra_runtime_files;

  devices::AllocationPolicy policy;
  // Runtime handlers (RuntimeClass handlers) that run pods in virtual machines, where GPUs cannot
  // be given by device assignment: a GPU request in such a pod is refused.
  std::vector<std::string> vm_runtime_handlers;
  // How often the ledger is rebuilt from the runtime record (it also is at start-up, and soon
  // after a request found every matching device in use).
  std::chrono::milliseconds resync_interval{0};

  // The kubelet device plugin dxshim also serves: one device of `device_plugin_resource` per pod
  // slot, registered with kubelet's kubelet.sock in `device_plugin_dir` once that socket exists.
  bool device_plugin = false;
  // Windows: the plugin starts once kubelet.exe has made a CRI call through dxshim's pipe.
  bool device_plugin_after_kubelet = false;
  std::string device_plugin_dir;
  std::string device_plugin_resource;
  // The memory resource: one device per policy.gpu_memory_unit of each GPU's capacity (empty,
  // written "-": not registered).
  std::string device_plugin_memory_resource;
  // A Node Feature Discovery local feature file kept up to date with the node's GPU labels
  // (empty, written "-": none); removed when dxshim stops only if node_feature_file_remove.
  std::string node_feature_file;
  bool node_feature_file_remove = false;
  // The operator's HTTP endpoint (/metrics, /healthz, /readyz): "HOST:PORT", empty (written "-")
  // for none.
  std::string metrics_listen;

  Target target = Target::kLinux;
  // Linux target: where a device's System32 / SysWOW64 runtime files appear in the container.
  std::string linux_system32_path;
  std::string linux_syswow64_path;
};

// Any invalid configuration; the message names the source (file and line, or flag), the key and
// what was wrong.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What no single key can say: keys that contradict each other (the memory resource named as the
// slots resource). Throws ConfigError naming both keys.
void CheckServeConfig(const ServeConfig& cfg);

// "0660" or "660" (octal, at most 0777).
std::uint32_t ParseSocketMode(std::string_view text);
// "250ms", "10s", "2m"; a bare number means seconds. At most 24h.
std::chrono::milliseconds ParseDuration(std::string_view text);
// "true" or "false".
bool ParseBool(std::string_view text);
// "HOST:PORT" for the metrics endpoint: an IPv4 address or a bracketed IPv6 address, and a port
// (0: any free one); "-" or "" for none.
std::string ParseMetricsListen(std::string_view text);
// An extended resource name: "<domain>/<name>", the domain a DNS subdomain outside kubernetes.io.
std::string ParseResourceName(std::string_view text);

}  // namespace dxshim::config
