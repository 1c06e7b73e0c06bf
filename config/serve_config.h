// Configuration of `dxshim serve`. One table of keys serves both sources: a YAML file uses the
// long flag names as keys, and command-line flags override the file key by key.
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

struct ServeConfig {
#ifdef _WIN32
  std::string listen = "npipe://./pipe/dxshim";
  std::string runtime = "npipe://./pipe/containerd-containerd";
#else
  std::string listen = "unix:///run/dxshim/dxshim.sock";
  std::string runtime = "unix:///run/containerd/containerd.sock";
#endif
  std::uint32_t socket_mode = 0660;
  // Who may open dxshim's named pipe (Windows): SYSTEM and Administrators.
  std::string pipe_sddl = "D:P(A;;GA;;;SY)(A;;GA;;;BA)";
  std::string log_level = "info";
  // Empty (written "-"): log to stderr. Otherwise a file, rotated at log_file_max_size keeping
  // log_file_count older files (FILE.1 ... FILE.N). A Windows service has no stderr, hence its
  // default.
#ifdef _WIN32
  std::string log_file = "C:\\ProgramData\\dxshim\\dxshim.log";
#else
  std::string log_file;
#endif
  std::uint64_t log_file_max_size = 10u << 20;
  unsigned log_file_count = 5;
  // How long in-flight unary calls may take to finish after SIGTERM/SIGINT.
  std::chrono::milliseconds shutdown_grace{10000};
  // Upper bound of the reconnect backoff towards the runtime.
  std::chrono::milliseconds reconnect_backoff_max{2000};

  // Devices: where they come from and which are handed out.
  std::string device_source = "auto";  // auto, linux, windows, inventory:PATH
  std::string sysfs_root = "/sys";
  std::chrono::milliseconds device_refresh{10000};
  bool include_integrated = false;
  bool include_detachable = false;
  // File only (a list of mappings): the operator's runtime files per vendor.
  std::vector<devices::VendorRuntimeFiles> extra_runtime_files;

  devices::AllocationPolicy policy;
  // Runtime handlers (RuntimeClass handlers) that run pods in virtual machines, where GPUs cannot
  // be given by device assignment: a GPU request in such a pod is refused. On Windows the one
  // containerd's default configuration names for Hyper-V isolation (hcsshim gives GPUs to
  // process-isolated containers only, microsoft/hcsshim#1902).
#ifdef _WIN32
  std::vector<std::string> vm_runtime_handlers = {"runhcs-wcow-hypervisor"};
#else
  std::vector<std::string> vm_runtime_handlers;
#endif
  // How often the allocation ledger is rebuilt from the runtime's containers (it also is at
  // start-up, and soon after a request found every matching device in use).
  std::chrono::milliseconds resync_interval{30000};

  // The kubelet device plugin dxshim also serves: one device of `device_plugin_resource` per pod
  // slot, registered with kubelet's kubelet.sock in `device_plugin_dir` once that socket exists.
  bool device_plugin = true;
#ifdef _WIN32
  std::string device_plugin_dir = "C:\\var\\lib\\kubelet\\device-plugins";
#else
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
#endif
  std::string device_plugin_resource = "dxshim.io/gpu";
  // A Node Feature Discovery local feature file kept up to date with the node's GPU labels
  // (empty, written "-": none); removed when dxshim stops only if node_feature_file_remove.
  std::string node_feature_file;
  bool node_feature_file_remove = false;
  // The operator's HTTP endpoint (/metrics, /healthz, /readyz): "HOST:PORT", empty (written "-")
  // for none.
  std::string metrics_listen;

#ifdef _WIN32
  Target target = Target::kWindows;
#else
  Target target = Target::kLinux;
#endif
  // Linux target: where a device's System32 / SysWOW64 runtime files appear in the container.
  std::string linux_system32_path = "/usr/lib/dxshim";
  std::string linux_syswow64_path = "/usr/lib32/dxshim";
};

// Any invalid configuration; the message names the source (file and line, or flag), the key and
// what was wrong.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The keys a file or the flags may set, in the order `--help` shows them.
const std::vector<std::string>& ServeKeys();

// Sets one key from its textual value. `source` names where the value came from, for errors.
void ApplyServeKey(ServeConfig& config, std::string_view key, std::string_view value,
                   std::string_view source);

// Applies every key of a YAML mapping file on top of `config`. Scalar keys are the flags' names;
// list-valued keys (allow-namespaces, deny-namespaces, vm-runtime-handlers) also take a YAML list;
// the mapping-valued extra-runtime-files exists only in files.
void ApplyServeConfigFile(ServeConfig& config, const std::string& path);

// "0660" or "660" (octal, at most 0777).
std::uint32_t ParseSocketMode(std::string_view text);
// "250ms", "10s", "2m"; a bare number means seconds.
std::chrono::milliseconds ParseDuration(std::string_view text);
// "true" or "false".
bool ParseBool(std::string_view text);
// "HOST:PORT" for the metrics endpoint: an IPv4 address or a bracketed IPv6 address, and a port
// (0: any free one); "-" or "" for none.
std::string ParseMetricsListen(std::string_view text);
// An extended resource name: "<domain>/<name>", the domain a DNS subdomain outside kubernetes.io.
std::string ParseResourceName(std::string_view text);

}  // namespace dxshim::config
