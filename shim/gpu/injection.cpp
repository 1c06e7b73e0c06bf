#include "shim/gpu/injection.h"

#include <algorithm>
#include <utility>

#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"
#include "shim/base/utf8_text.h"
#include "shim/gpu/container_path.h"
#include "shim/gpu/gpu_environment.h"

namespace dxshim {
namespace {

constexpr std::string_view kVpciPrefix = "vpci-location-path://";

bool Windows(const TargetOptions& t) { return t.target == config::Target::kWindows; }

bool SamePath(std::string_view a, std::string_view b, const TargetOptions& t) {
  return Windows(t) ? EqualsIgnoreCase(a, b) : a == b;
}

// Lists `field` in plan.not_utf8 when `value` is not valid UTF-8, saying where it came from
// (`from`, already escaped). A proto3 string must be UTF-8: containerd 2.2+ refuses the request.
void CheckUtf8(std::string_view value, const std::string& field, const std::string& from,
               InjectionPlan& plan) {
  if (auto why = Utf8Problem(value)) plan.not_utf8.push_back(field + " " + *why + ", from " + from);
}

// "GPU <id>" for a message, the id shown valid UTF-8.
std::string GpuName(const devices::Device& d) { return "GPU " + EscapeInvalidUtf8(d.id); }

std::string ContainerPath(const devices::RuntimeFile& f, bool wow64, const TargetOptions& t) {
  if (Windows(t)) {
    return std::string(wow64 ? "C:\\Windows\\SysWOW64\\" : "C:\\Windows\\System32\\") +
           f.destination;
  }
  return (wow64 ? t.linux_syswow64_path : t.linux_system32_path) + "/" + f.destination;
}

}  // namespace

std::string RuntimeFileHostPath(const devices::Device& device, const devices::RuntimeFile& file,
                                const TargetOptions& target) {
  std::string source = file.source;
  const char sep = Windows(target) ? '\\' : '/';
  std::replace(source.begin(), source.end(), Windows(target) ? '/' : '\\', sep);
  std::string root = device.driver_store;
  while (!root.empty() && (root.back() == '\\' || root.back() == '/')) root.pop_back();
  return root + sep + source;
}

runtime::v1::Device DeviceEntry(const devices::Device& device, const TargetOptions& target) {
  runtime::v1::Device entry;
  if (Windows(target)) {
    // containerd (>= 1.7, Windows) turns this into an OCI WindowsDevice of IDType
    // vpci-location-path; container_path and permissions must stay empty there.
    entry.set_host_path(std::string(kVpciPrefix) + device.location_path);
  } else {
    entry.set_host_path(device.location_path);
    entry.set_container_path(device.location_path);
    entry.set_permissions("rw");
  }
  return entry;
}

bool NamesDevice(const runtime::v1::Device& entry, const devices::Device& device,
                 const TargetOptions& target) {
  return SamePath(entry.host_path(), DeviceEntry(device, target).host_path(), target);
}

bool IsClassDevice(const runtime::v1::Device& entry) {
  const std::string_view p = entry.host_path();
  return p.starts_with("class/") || p.starts_with("vpci-class-guid://");
}

namespace {

// The device entry's strings, from `d`'s location path.
void CheckDeviceEntry(const runtime::v1::Device& entry, const devices::Device& d,
                      InjectionPlan& plan) {
  const auto from = GpuName(d) + "'s location path";
  CheckUtf8(entry.host_path(), "device host_path", from, plan);
  CheckUtf8(entry.container_path(), "device container_path", from, plan);
}

// The devices not already in the config; the first replaces the class entry at `narrow_index`.
void PlanDevices(const runtime::v1::ContainerConfig& config,
                 const std::vector<devices::Device>& devices, std::optional<int> narrow_index,
                 const TargetOptions& target, InjectionPlan& plan) {
  for (const auto& d : devices) {
    const bool present = std::any_of(config.devices().begin(), config.devices().end(),
                                     [&](const auto& e) { return NamesDevice(e, d, target); });
    if (present) continue;
    CheckDeviceEntry(DeviceEntry(d, target), d, plan);
    if (narrow_index && !plan.replace_index) {
      plan.replace_index = narrow_index;
      plan.replacement = DeviceEntry(d, target);
      plan.notes.push_back("narrowed " + config.devices(*narrow_index).host_path() + " to " +
                           plan.replacement.host_path());
      continue;
    }
    plan.add_devices.push_back(DeviceEntry(d, target));
  }
}

// The present runtime files of `devices`, each unless its destination is already taken.
void PlanMounts(const runtime::v1::ContainerConfig& config,
                const std::vector<devices::Device>& devices, const TargetOptions& target,
                InjectionPlan& plan) {
  // Destinations already taken, in the form the runtime will use (container_path.h).
  // A few dozen at most: a vector searched in order beats a hash set's allocations.
  std::vector<std::string> taken;
  taken.reserve(static_cast<std::size_t>(config.mounts_size()) + 32);
  for (const auto& m : config.mounts()) {
    taken.push_back(MountDestinationKey(m.container_path(), m.host_path(), Windows(target)));
  }
  for (const auto& d : devices) {
    for (const bool wow64 : {false, true}) {
      for (const auto& f : wow64 ? d.syswow64 : d.system32) {
        const auto host = RuntimeFileHostPath(d, f, target);
        const auto inside = ContainerPath(f, wow64, target);
        auto key = MountDestinationKey(inside, host, Windows(target));
        if (std::find(taken.begin(), taken.end(), key) != taken.end()) {
          if (std::none_of(plan.add_mounts.begin(), plan.add_mounts.end(),
                           [&](const auto& m) { return m.host_path() == host; })) {
            std::string note = inside;
            plan.notes.push_back(
                note.append(": already mounted, ").append(host).append(" not added"));
          }
          continue;
        }
        const auto state = target.host_file ? target.host_file(host) : HostFileState::kPresent;
        if (state == HostFileState::kAbsent) {
          plan.notes.push_back(host + ": missing on this host, not mounted");
          continue;
        }
        if (state == HostFileState::kGone) {
          plan.gone.push_back(host);
          continue;
        }
        taken.push_back(std::move(key));
        const auto file = GpuName(d) + "'s runtime file " + EscapeInvalidUtf8(f.source) + " => " +
                          EscapeInvalidUtf8(f.destination);
        CheckUtf8(host, "mount host_path", file + " in its DriverStore folder", plan);
        CheckUtf8(inside, "mount container_path", file, plan);
        runtime::v1::Mount m;
        m.set_host_path(host);
        m.set_container_path(inside);
        m.set_readonly(true);
        plan.add_mounts.push_back(std::move(m));
      }
    }
  }
}

// The variables added and those the pod sets itself, each a comma-separated list of names.
struct EnvironmentNames {
  std::string set;
  std::string kept;
};

// The GPUs' environment; what the pod sets itself is its own.
EnvironmentNames PlanEnvironment(const runtime::v1::ContainerConfig& config,
                                 const std::vector<devices::Device>& devices,
                                 const MemoryBudget& memory, const TargetOptions& target,
                                 InjectionPlan& plan) {
  auto budget = memory.container;
  if (!budget && !memory.bytes.empty()) {
    budget = *std::min_element(memory.bytes.begin(), memory.bytes.end());
  }
  auto env = GpuEnvironmentFor(devices, budget);
  EnvironmentNames names;
  for (auto& variable : env.variables) {
    const std::string& name = variable.first;
    // Windows' environment names ignore case; Linux's do not.
    const bool pod_sets = std::any_of(
        config.envs().begin(), config.envs().end(), [&](const runtime::v1::KeyValue& e) {
          return Windows(target) ? EqualsIgnoreCase(e.key(), name) : e.key() == name;
        });
    auto& list = pod_sets ? names.kept : names.set;
    list += (list.empty() ? "" : ", ") + name;
    if (pod_sets) continue;
    // KeyValue.value is `bytes` in newer cri-api, but a `string` in the cri-api of containerd
    // 2.2.0 (k8s.io/cri-api v0.34.1): checked as well.
    CheckUtf8(name, "env key", "the GPUs' environment", plan);
    CheckUtf8(variable.second, "env " + EscapeInvalidUtf8(name) + " value",
              "the GPUs' facts in the device inventory", plan);
    runtime::v1::KeyValue kv;
    kv.set_key(name);
    kv.set_value(std::move(variable.second));
    plan.add_envs.push_back(std::move(kv));
  }
  for (auto& note : env.notes) plan.notes.push_back(std::move(note));
  return names;
}

}  // namespace

InjectionPlan PlanInjection(const runtime::v1::ContainerConfig& config,
                            const std::vector<devices::Device>& devices, bool exclusive,
                            const std::string& explanation, std::optional<int> narrow_index,
                            const TargetOptions& target, const MemoryBudget& memory) {
  InjectionPlan plan;
  PlanDevices(config, devices, narrow_index, target, plan);
  PlanMounts(config, devices, target, plan);
  const auto env = PlanEnvironment(config, devices, memory, target, plan);
  plan.labels[keys::kDevicesLabel] = JoinCommaList(devices, &devices::Device::id);
  plan.labels[keys::kSharingLabel] = exclusive ? keys::kExclusive : keys::kShared;
  if (memory.asked) {
    plan.labels[keys::kGpuMemoryLabel] =
        JoinCommaList(memory.bytes, [](auto m) { return std::to_string(m); });
  }
  plan.annotations[keys::kExplanationAnnotation] =
      explanation + "; " + std::to_string(plan.add_mounts.size()) + " runtime file(s)" +
      (env.set.empty() ? "" : "; env " + env.set) +
      (env.kept.empty() ? "" : "; kept the pod's own " + env.kept);
  const std::string gpus = JoinList(devices, ", ", GpuName);
  for (const auto* map : {&plan.labels, &plan.annotations}) {
    const std::string kind = map == &plan.labels ? "label " : "annotation ";
    for (const auto& [key, value] : *map) {
      CheckUtf8(key, kind + "key", "dxshim", plan);
      CheckUtf8(value, kind + key + " value", "the device inventory's facts on " + gpus, plan);
    }
  }
  return plan;
}

void ApplyPlan(const InjectionPlan& plan, runtime::v1::ContainerConfig& config) {
  if (plan.replace_index && *plan.replace_index < config.devices_size()) {
    *config.mutable_devices(*plan.replace_index) = plan.replacement;
  }
  for (const auto& d : plan.add_devices) *config.add_devices() = d;
  for (const auto& m : plan.add_mounts) *config.add_mounts() = m;
  for (const auto& e : plan.add_envs) *config.add_envs() = e;
  for (const auto& [k, v] : plan.labels) (*config.mutable_labels())[k] = v;
  for (const auto& [k, v] : plan.annotations) (*config.mutable_annotations())[k] = v;
}

}  // namespace dxshim
