#include "shim/device_plugin/plugin_memory_units.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "devices/allocation/gpu_memory.h"
#include "devices/allocation/memory_fit.h"
#include "devices/dxshim_keys.h"
#include "shim/ledger/ledger.h"

namespace dxshim::device_plugin {
namespace {

// The unit, never 0 (the option table refuses less than 1Mi; this guards a policy made in code).
std::uint64_t UnitOf(const devices::AllocationPolicy& policy) {
  return policy.gpu_memory_unit ? policy.gpu_memory_unit : std::uint64_t{1} << 30;
}

unsigned Clamped(std::uint64_t n) {
  return static_cast<unsigned>(std::min<std::uint64_t>(n, std::numeric_limits<unsigned>::max()));
}

// The GPUs' use by the record, as serve's ledger rebuilds it from the same record.
devices::Usage HeldBy(const RuntimeRecord& record, const devices::AllocationPolicy& policy) {
  Ledger ledger(policy);
  ledger.BeginResync();
  ledger.FinishResync(record);
  return ledger.Usage();
}

// Places a pod that has not started yet and reserves `bytes` (on one GPU, as a memory limit
// without a GPU count is placed) where dxshim's policy would: in `usage`, taking a pod slot when
// `slot`. Nothing when no GPU has room: dxshim will refuse it at CreateContainer.
void PlaceNotStarted(const devices::Inventory& inventory, const devices::AllocationPolicy& policy,
                     std::uint64_t bytes, bool slot, devices::Usage& usage) {
  auto by = policy;
  if (!slot) by.max_containers_per_device = std::numeric_limits<unsigned>::max();
  devices::DeviceRequest request;
  request.gpu_memory = bytes;
  try {
    const auto placed = devices::Choose(inventory, usage, request, by);
    for (const auto& d : placed.devices) {
      auto& u = usage[d.id];
      u.memory += bytes;
      if (slot) ++u.pods;
    }
  } catch (const devices::AllocationError&) {
  }
}

// Adds `bytes` more to what `sandbox` holds, spread over its GPUs: a started pod whose other
// containers have not been created yet.
void Grow(const std::string& sandbox, std::uint64_t bytes, devices::Usage& usage) {
  std::vector<devices::DeviceUsage*> gpus;
  for (auto& [id, u] : usage) {
    const bool holds =
        std::any_of(u.holders.begin(), u.holders.end(),
                    [&](const devices::DeviceHolder& h) { return h.sandbox_id == sandbox; });
    if (holds) gpus.push_back(&u);
  }
  for (auto* u : gpus) u->memory += bytes / gpus.size();
}

}  // namespace

unsigned MemoryUnitsOf(const devices::Device& d, const devices::AllocationPolicy& policy) {
  return Clamped(devices::MemoryCapacity(d, policy) / UnitOf(policy));
}

MemoryCount CountMemory(const RuntimeRecord& record, const devices::Inventory& inventory,
                        const devices::AllocationPolicy& policy,
                        const std::vector<node::PodDeviceEntry>& kubelet,
                        const std::vector<std::set<std::string>>& answered) {
  MemoryCount count;
  count.held = HeldBy(record, policy);
  count.expected = count.held;
  std::map<std::string, std::string> held_by;  // unit -> the sandbox holding it
  for (const auto& c : record.containers) {
    if (!HoldsDevices(record, c)) continue;
    for (const auto& id : c.plugin_memory_units) held_by.emplace(id, c.sandbox_id);
  }
  for (const auto& [id, sandbox] : held_by) count.held_units.insert(id);
  count.allocated = count.held_units;
  std::map<std::string, std::string> ready;  // pod UID -> its ready sandbox
  for (const auto& [sandbox, uid] : record.pod_uids) {
    if (record.ready_sandboxes.count(sandbox)) ready[uid] = sandbox;
  }
  std::set<std::string> just_answered;
  for (const auto& ids : answered) just_answered.insert(ids.begin(), ids.end());
  // Kubelet's pods, each with every unit of its containers (an init container's pass on).
  std::map<std::string, std::set<std::string>> pods;
  for (const auto& e : kubelet) pods[e.pod_uid].insert(e.device_ids.begin(), e.device_ids.end());
  const auto unit = UnitOf(policy);
  for (const auto& [uid, ids] : pods) {
    const auto sandbox = ready.find(uid);
    std::string holder = sandbox == ready.end() ? "" : sandbox->second;
    bool answered_now = false;
    std::uint64_t not_held = 0;
    for (const auto& id : ids) {
      answered_now = answered_now || just_answered.count(id) > 0;
      const auto it = held_by.find(id);
      if (it == held_by.end()) {
        ++not_held;
      } else {
        holder = it->second;
      }
    }
    // A pod with no ready sandbox that dxshim did not just see allocated is gone: kubelet frees
    // its units at its next admission (devicemanager's UpdateAllocatedDevices), before counting.
    if (holder.empty() && !answered_now) continue;
    count.allocated.insert(ids.begin(), ids.end());
    if (not_held == 0) continue;
    const bool holds = std::any_of(count.held.begin(), count.held.end(), [&](const auto& u) {
      return std::any_of(u.second.holders.begin(), u.second.holders.end(),
                         [&](const devices::DeviceHolder& h) { return h.sandbox_id == holder; });
    });
    if (holds) {
      Grow(holder, not_held * unit, count.expected);
    } else {
      PlaceNotStarted(inventory, policy, not_held * unit, true, count.expected);
    }
  }
  for (const auto& ids : answered) {
    std::uint64_t fresh = 0;
    for (const auto& id : ids) fresh += count.allocated.insert(id).second ? 1u : 0u;
    if (fresh) PlaceNotStarted(inventory, policy, fresh * unit, false, count.expected);
  }
  const auto fit = devices::FindLargestFit(inventory, count.expected, policy);
  count.fit_units = fit.bytes / unit;
  if (fit.device) count.fit_gpu = fit.device->id;
  return count;
}

PluginMemoryUnits::PluginMemoryUnits(devices::AllocationPolicy policy, std::string checkpoint,
                                     std::string resource)
    : policy_(std::move(policy)),
      checkpoint_(std::move(checkpoint)),
      resource_(std::move(resource)) {}

std::string PluginMemoryUnits::UnitId(const std::string& gpu_id, unsigned n) {
  return DeviceId("mem", gpu_id, n);
}

const char* PluginMemoryUnits::annotation() const { return keys::kPluginMemoryUnitsAnnotation; }

std::string PluginMemoryUnits::Describe() const {
  std::string out = "one memory unit per " + devices::FormatBytes(UnitOf(policy_)) +
                    " of each GPU, the largest fit on one GPU offered";
  if (policy_.gpu_memory_reserved) {
    out += " (less " + devices::FormatBytes(policy_.gpu_memory_reserved) + " kept for the host)";
  }
  return out;
}

std::vector<node::PodDeviceEntry> PluginMemoryUnits::ReadCheckpoint() const {
  std::vector<node::PodDeviceEntry> mine;
  if (checkpoint_.empty()) return mine;
  std::ifstream in(checkpoint_, std::ios::binary);
  if (!in) return mine;  // no kubelet yet, or one that keeps none
  std::stringstream text;
  text << in.rdbuf();
  try {
    for (auto& e : node::PodDeviceEntries(text.str())) {
      if (e.resource == resource_) mine.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    spdlog::warn("device plugin: kubelet's checkpoint {} cannot be read ({}); counting without it",
                 checkpoint_, e.what());
  }
  return mine;
}

std::vector<PluginDevice> PluginMemoryUnits::Advertised(const devices::Inventory& inventory,
                                                        const RuntimeRecord& record,
                                                        SchedulerGap& gap) {
  const auto kubelet = ReadCheckpoint();
  std::lock_guard lock(mutex_);
  // An answer is counted from the record once its containers exist, and from kubelet's
  // checkpoint once its pod has a sandbox; until then for kAnswerKept at most (kubelet creates
  // the sandbox right after admission).
  std::set<std::string> held;
  for (const auto& c : record.containers) {
    if (HoldsDevices(record, c))
      held.insert(c.plugin_memory_units.begin(), c.plugin_memory_units.end());
  }
  std::set<std::string> uids_ready;
  for (const auto& [sandbox, uid] : record.pod_uids) {
    if (record.ready_sandboxes.count(sandbox)) uids_ready.insert(uid);
  }
  std::set<std::string> in_ready_pods;
  for (const auto& e : kubelet) {
    if (uids_ready.count(e.pod_uid)) in_ready_pods.insert(e.device_ids.begin(), e.device_ids.end());
  }
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(answered_, [&](const Answer& a) {
    const auto counted = [&](const std::string& id) {
      return held.count(id) > 0 || in_ready_pods.count(id) > 0;
    };
    return now - a.at > kAnswerKept || std::all_of(a.ids.begin(), a.ids.end(), counted);
  });
  std::vector<std::set<std::string>> answered;
  for (const auto& a : answered_) answered.push_back(a.ids);
  count_ = CountMemory(record, inventory, policy_, kubelet, answered);
  inventory_ = inventory;
  auto units = For(inventory, count_);
  gap = {};
  gap.counted = count_.allocated;
  for (const auto& u : units) gap.unseen += u.healthy ? 0 : 1;
  return units;
}

std::vector<PluginDevice> PluginMemoryUnits::For(const devices::Inventory& inventory,
                                                 const MemoryCount& count) {
  std::lock_guard lock(known_mutex_);
  for (const auto& d : inventory.devices) {
    const auto units = MemoryUnitsOf(d, policy_);
    const auto it = std::find_if(gpus_.begin(), gpus_.end(),
                                 [&](const auto& seen) { return seen.first == d.id; });
    if (it == gpus_.end()) {
      gpus_.emplace_back(d.id, units);
    } else {
      it->second = std::max(it->second, units);
    }
  }
  std::vector<PluginDevice> units;
  std::vector<bool> usable;  // present and still its GPU's
  for (const auto& [gpu, most] : gpus_) {
    const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&gpu = gpu](const devices::Device& d) { return d.id == gpu; });
    const unsigned has =
        it != inventory.devices.end() && it->present ? MemoryUnitsOf(*it, policy_) : 0u;
    for (unsigned n = 0; n < most; ++n) {
      PluginDevice unit{UnitId(gpu, n), gpu, false};
      unit.healthy = n < has && count.allocated.count(unit.id) > 0;
      known_.insert(unit.id);
      usable.push_back(n < has);
      units.push_back(std::move(unit));
    }
  }
  // The largest fit: the units of the GPU it is on first, then any other free ones.
  auto offer = count.fit_units;
  for (const bool fit_gpu_first : {true, false}) {
    for (std::size_t i = 0; i < units.size() && offer > 0; ++i) {
      auto& u = units[i];
      if (u.healthy || !usable[i] || (fit_gpu_first && u.gpu_id != count.fit_gpu)) continue;
      if (count.allocated.count(u.id)) continue;
      u.healthy = true;
      --offer;
    }
  }
  return units;
}

bool PluginMemoryUnits::Known(const std::string& id) const {
  std::lock_guard lock(known_mutex_);
  return known_.count(id) > 0;
}

std::vector<std::string> PluginMemoryUnits::Preferred(const std::vector<std::string>& available,
                                                      const std::vector<std::string>& must_include,
                                                      std::size_t size) {
  std::string fit_gpu;
  {
    std::lock_guard lock(mutex_);
    fit_gpu = count_.fit_gpu;
  }
  // The units named for the GPU with the largest fit, then the others: the ids then name the
  // GPU the pod most likely goes to (which dxshim's policy still decides at CreateContainer).
  const auto hash = fit_gpu.empty() ? std::string() : UnitId(fit_gpu, 0);
  const auto prefix = hash.substr(0, hash.rfind('-') + 1);
  std::vector<std::string> first;
  std::vector<std::string> then;
  for (const auto& id : available) {
    (!prefix.empty() && id.starts_with(prefix) ? first : then).push_back(id);
  }
  first.insert(first.end(), then.begin(), then.end());
  return PreferFrom(first, must_include, size);
}

std::string PluginMemoryUnits::Refusal(const std::vector<std::string>& ids) {
  std::lock_guard lock(mutex_);
  // Only the pods that hold GPUs count here: units kubelet allocated to pods that have not
  // started may be this very pod's other containers, which Allocate cannot tell apart.
  const auto unit = UnitOf(policy_);
  std::uint64_t fresh = 0;
  for (const auto& id : ids) fresh += count_.held_units.count(id) ? 0u : 1u;
  const auto fit = devices::FindLargestFit(inventory_, count_.held, policy_);
  if (fresh * unit <= fit.bytes) return "";
  return std::to_string(ids.size()) + " memory units (" + devices::FormatBytes(fresh * unit) +
         ") fit on no single GPU of this node, and a container's GPU memory must: " +
         devices::FreeUnitsByGpu(inventory_, count_.held, policy_, unit);
}

void PluginMemoryUnits::Allocated(const std::vector<std::string>& ids) {
  std::lock_guard lock(mutex_);
  answered_.push_back({{ids.begin(), ids.end()}, std::chrono::steady_clock::now()});
}

}  // namespace dxshim::device_plugin
