// How chosen devices enter a container config: the target mapping. The result is a plan (what to
// add, what to replace), applied to the CRI message by the shim and to crictl's JSON by
// `dxshim rewrite`, so both show the same change. Entries already in the config are never
// removed or reordered; the one exception is an operator-enabled narrowing of a class device.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/serve_config.h"
#include "config/serve_defaults.h"
#include "devices/device.h"
#include "runtime/v1/api.pb.h"

namespace dxshim {

// What is at a runtime file's host path now. containerd on Windows turns a mount source that does
// not exist into an empty directory (parseMount: Stat, then MkdirAll) and maps that over the DLL,
// so only present files are ever mounted.
enum class HostFileState {
  kPresent,
  kAbsent,  // not there, and never seen there: the driver lists a file it does not ship
  kGone,    // seen there before, missing now: the driver changed under the device snapshot
};

struct TargetOptions {
  config::Target target = config::Target::kLinux;
  std::string linux_system32_path = config::kDefaultLinuxSystem32Path;
  std::string linux_syswow64_path = config::kDefaultLinuxSyswow64Path;
  // What is at a runtime file's host path (host_files.h). Unset: every file counts as present
  // (`dxshim rewrite --skip-host-file-check`).
  std::function<HostFileState(const std::string& host_path)> host_file;
  // Runtime handlers that run pods in VMs, where devices cannot be given this way (hcsshim gives
  // GPUs to process-isolated containers only): GPU requests in their sandboxes are refused.
  std::vector<std::string> vm_runtime_handlers;
};

// The GPU memory a pod reserved: the bytes on each of its devices once this container is created
// (none: no memory variable), and whether the pod asked that amount, which is then recorded in the
// dxshim.io/gpu-memory label the ledger is rebuilt from; and what this container may use on each
// of its GPUs when it was given memory units of its own (nullopt: the pod's reservation, the
// smallest of `bytes`), told to it in DXSHIM_GPU_MEMORY_BYTES.
struct MemoryBudget {
  std::vector<std::uint64_t> bytes;
  bool asked = false;
  std::optional<std::uint64_t> container;
};

struct InjectionPlan {
  std::vector<runtime::v1::Device> add_devices;
  std::optional<int> replace_index;  // narrowing: config.devices[index] becomes replacement
  runtime::v1::Device replacement;
  std::vector<runtime::v1::Mount> add_mounts;
  std::vector<runtime::v1::KeyValue> add_envs;  // gpu_environment.h, unless the pod sets them
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> notes;  // files skipped and why, for --explain and the log
  std::vector<std::string> gone;   // host paths of runtime files that are kGone: none is mounted
  // What the plan would write that is not valid UTF-8 (shim/base/utf8_text.h), each naming the
  // field and the GPU or file it came from. Never forwarded: containerd 2.2 and later refuse a CRI
  // request with such a string, so Decide() refuses the container instead.
  std::vector<std::string> not_utf8;
};

// The CRI device entry for `device` on the target, e.g. host_path
// "vpci-location-path://PCIROOT(0)#PCI(1E00)" on Windows, the device node on Linux.
runtime::v1::Device DeviceEntry(const devices::Device& device, const TargetOptions& target);

// Where `file` of `device` is on the host: the device's DriverStore folder and the file's source,
// with the target's separators.
std::string RuntimeFileHostPath(const devices::Device& device, const devices::RuntimeFile& file,
                                const TargetOptions& target);

// Whether a config device entry names `device` on the target (case-insensitive on Windows).
bool NamesDevice(const runtime::v1::Device& entry, const devices::Device& device,
                 const TargetOptions& target);

// True for "class/<GUID>" and "vpci-class-guid://<GUID>" entries (all GPUs of a class).
bool IsClassDevice(const runtime::v1::Device& entry);

// Devices (unless already in the config, or replacing the class device at `narrow_index`), the
// present runtime files of `devices`, each unless the config, or an earlier file, already mounts
// its destination (compared as the runtime will see it: container_path.h), and the environment
// that names the GPUs (gpu_environment.h), each variable unless the config sets it (by name,
// case-insensitively on Windows, where the environment is). `memory`: what the pod reserved.
// Every string it adds is checked to be UTF-8: what is not is listed in `not_utf8`.
InjectionPlan PlanInjection(const runtime::v1::ContainerConfig& config,
                            const std::vector<devices::Device>& devices, bool exclusive,
                            const std::string& explanation, std::optional<int> narrow_index,
                            const TargetOptions& target, const MemoryBudget& memory = {});

void ApplyPlan(const InjectionPlan& plan, runtime::v1::ContainerConfig& config);

}  // namespace dxshim
