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
#include "devices/device.h"
#include "runtime/v1/api.pb.h"

namespace dxshim {

inline constexpr char kDevicesLabel[] = "dxshim.io/devices";
inline constexpr char kSharingLabel[] = "dxshim.io/sharing";
inline constexpr char kExplanationAnnotation[] = "dxshim.io/explanation";

struct TargetOptions {
  config::Target target = config::Target::kLinux;
  std::string linux_system32_path = "/usr/lib/dxshim";
  std::string linux_syswow64_path = "/usr/lib32/dxshim";
  // Whether a runtime file exists on this host; only existing files are mounted (containerd
  // would create a directory in place of a missing one). Unset: every file counts as present
  // (`dxshim rewrite --skip-host-file-check`).
  std::function<bool(const std::string& host_path)> file_exists;
};

struct InjectionPlan {
  std::vector<runtime::v1::Device> add_devices;
  std::optional<int> replace_index;  // narrowing: config.devices[index] becomes replacement
  runtime::v1::Device replacement;
  std::vector<runtime::v1::Mount> add_mounts;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> notes;  // files skipped and why, for --explain and the log
};

// The CRI device entry for `device` on the target, e.g. host_path
// "vpci-location-path://PCIROOT(0)#PCI(1E00)" on Windows, the device node on Linux.
runtime::v1::Device DeviceEntry(const devices::Device& device, const TargetOptions& target);

// Whether a config device entry names `device` on the target (case-insensitive on Windows).
bool NamesDevice(const runtime::v1::Device& entry, const devices::Device& device,
                 const TargetOptions& target);

// True for "class/<GUID>" and "vpci-class-guid://<GUID>" entries (all GPUs of a class).
bool IsClassDevice(const runtime::v1::Device& entry);

InjectionPlan PlanInjection(const runtime::v1::ContainerConfig& config,
                            const std::vector<devices::Device>& devices, bool exclusive,
                            const std::string& explanation, std::optional<int> narrow_index,
                            const TargetOptions& target);

void ApplyPlan(const InjectionPlan& plan, runtime::v1::ContainerConfig& config);

}  // namespace dxshim
