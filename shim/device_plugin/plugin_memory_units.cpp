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
#include "shim/base/dxshim_keys.h"
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

// Places a pod that has not started yet and reserves `bytes` (over `gpus` GPUs, as its
// dxshim.io/gpu count says; one when it has none) where dxshim's policy would: in `usage`,
// taking a pod slot on each when `slot`. Nothing when no GPU has room: dxshim will refuse it at
// CreateContainer, and it will reserve nothing.
void PlaceNotStarted(const devices::Inventory& inventory, const devices::AllocationPolicy& policy,
                     std::uint64_t bytes, unsigned gpus, bool slot, devices::Usage& usage) {
  auto by = policy;
  if (!slot) by.max_containers_per_device = std::numeric_limits<unsigned>::max();
  devices::DeviceRequest request;
  request.count = std::max(gpus, 1u);
  request.gpu_memory = bytes / request.count;
  if (request.gpu_memory == 0) return;
  try {
    const auto placed = devices::Choose(inventory, usage, request, by);
    for (const auto& d : placed.devices) {
      auto& u = usage[d.id];
      u.memory += request.gpu_memory;
      if (slot) ++u.pods;
    }
  } catch (const devices::AllocationError&) {
  }
}

// Grows what `sandbox` holds on each of its GPUs to `total` units spread over them, as serve's
// ledger grows a pod whose next container brings units it does not hold yet (never below what it
// holds; an exclusive hold has its GPUs' whole capacity already).
void GrowTo(const std::string& sandbox, std::uint64_t total, const devices::Inventory& inventory,
            const devices::AllocationPolicy& policy, devices::Usage& usage) {
  struct Held {
    const std::string* id;
    devices::DeviceUsage* use;
    const devices::DeviceHolder* holder;
  };
  std::vector<Held> gpus;
  for (auto& [id, u] : usage) {
    for (const auto& h : u.holders) {
      if (h.sandbox_id == sandbox) gpus.push_back({&id, &u, &h});
    }
  }
  if (gpus.empty()) return;
  const auto target = total * UnitOf(policy) / gpus.size();
  for (const auto& g : gpus) {
    if (g.holder->exclusive) continue;
    std::uint64_t now = g.holder->memory.value_or(0);
    if (!g.holder->memory) {
      for (const auto& d : inventory.devices) {
        if (d.id == *g.id) now = devices::DefaultGpuMemory(d, policy);
      }
    }
    if (target > now) g.use->memory += target - now;
  }
}

}  // namespace

unsigned MemoryUnitsOf(const devices::Device& d, const devices::AllocationPolicy& policy) {
  return Clamped(devices::MemoryCapacity(d, policy) / UnitOf(policy));
}

MemoryCount CountMemory(const RuntimeRecord& record, const devices::Inventory& inventory,
                        const devices::AllocationPolicy& policy,
                        const std::vector<install::PodDeviceEntry>& kubelet,
                        const std::vector<std::set<std::string>>& answered,
                        const std::map<std::string, unsigned>& gpus_of) {
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
    std::string holder;  // the pod's sandbox that holds GPUs, or its ready one
    bool all_answered = !ids.empty();
    std::set<std::string> mine;  // the pod's units, with those its sandbox holds
    for (const auto& id : ids) {
      all_answered = all_answered && just_answered.count(id) > 0;
      const auto it = held_by.find(id);
      if (it == held_by.end()) continue;
      const auto of = record.pod_uids.find(it->second);
      if (of == record.pod_uids.end() || of->second == uid) holder = it->second;
    }
    const auto sandbox = ready.find(uid);
    if (holder.empty() && sandbox != ready.end()) holder = sandbox->second;
    // A pod with no ready sandbox that dxshim did not just answer is gone: kubelet frees its
    // units at its next admission (devicemanager's UpdateAllocatedDevices), before counting.
    if (holder.empty() && !all_answered) continue;
    count.allocated.insert(ids.begin(), ids.end());
    mine = ids;
    for (const auto& [id, by] : held_by) {
      if (by == holder) mine.insert(id);
    }
    const bool holds = std::any_of(count.held.begin(), count.held.end(), [&](const auto& u) {
      return std::any_of(u.second.holders.begin(), u.second.holders.end(),
                         [&](const devices::DeviceHolder& h) { return h.sandbox_id == holder; });
    });
    if (holds) {
      GrowTo(holder, mine.size(), inventory, policy, count.expected);
    } else {
      const auto gpus = gpus_of.find(uid);
      PlaceNotStarted(inventory, policy, ids.size() * unit,
                      gpus == gpus_of.end() ? 1u : gpus->second, true, count.expected);
    }
  }
  for (const auto& ids : answered) {
    std::uint64_t fresh = 0;
    for (const auto& id : ids) fresh += count.allocated.insert(id).second ? 1u : 0u;
    if (fresh) PlaceNotStarted(inventory, policy, fresh * unit, 1, false, count.expected);
  }
  const auto fit = devices::FindLargestFit(inventory, count.expected, policy);
  count.fit_units = fit.bytes / unit;
  if (fit.device) count.fit_gpu = fit.device->id;
  return count;
}

PluginMemoryUnits::PluginMemoryUnits(devices::AllocationPolicy policy, std::string checkpoint,
                                     std::string resource, std::string slots_resource)
    : PluginResource("mem"),
      policy_(std::move(policy)),
      checkpoint_(std::move(checkpoint)),
      resource_(std::move(resource)),
      slots_resource_(std::move(slots_resource)) {}

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

std::vector<install::PodDeviceEntry> PluginMemoryUnits::ReadCheckpoint() {
  if (checkpoint_.empty()) return {};
  std::ifstream in(checkpoint_, std::ios::binary);
  if (!in) return {};  // no kubelet yet, or one that keeps none
  std::stringstream text;
  text << in.rdbuf();
  try {
    auto entries = install::PodDeviceEntries(text.str());
    std::lock_guard lock(mutex_);
    last_checkpoint_ = std::move(entries);
  } catch (const std::exception& e) {
    // Kubelet replaces the file whole (a temporary file renamed); a file that does not read is
    // not kubelet's: the last one read stands.
    spdlog::warn(
        "device plugin: kubelet's checkpoint {} cannot be read ({}); counting with the "
        "last one read",
        checkpoint_, e.what());
  }
  std::lock_guard lock(mutex_);
  return last_checkpoint_;
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
    if (e.resource == resource_ && uids_ready.count(e.pod_uid))
      in_ready_pods.insert(e.device_ids.begin(), e.device_ids.end());
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
  std::vector<install::PodDeviceEntry> memory;
  std::map<std::string, std::set<std::string>> slots;  // pod UID -> its dxshim.io/gpu devices
  for (const auto& e : kubelet) {
    if (e.resource == resource_) memory.push_back(e);
    if (e.resource == slots_resource_)
      slots[e.pod_uid].insert(e.device_ids.begin(), e.device_ids.end());
  }
  std::map<std::string, unsigned> gpus_of;
  for (const auto& [uid, ids] : slots) gpus_of[uid] = static_cast<unsigned>(ids.size());
  count_ = CountMemory(record, inventory, policy_, memory, answered, gpus_of);
  inventory_ = inventory;
  auto units = For(inventory, count_);
  gap = {};
  gap.counted = count_.allocated;
  for (const auto& u : units) gap.unseen += u.healthy ? 0 : 1;
  return units;
}

std::vector<PluginDevice> PluginMemoryUnits::For(const devices::Inventory& inventory,
                                                 const MemoryCount& count) {
  auto units =
      Listed(inventory, [this](const devices::Device& d) { return MemoryUnitsOf(d, policy_); });
  std::vector<bool> usable;  // present and still its GPU's
  for (auto& unit : units) {
    usable.push_back(unit.healthy);
    // Kubelet's: healthy even on a GPU gone, or the count kubelet admits by would grow.
    unit.healthy = count.allocated.count(unit.id) > 0;
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
  if (auto why = PluginResource::Refusal(ids); !why.empty()) return why;
  std::lock_guard lock(mutex_);
  // Against what is held and what kubelet allocated to pods not started (a container's units
  // allocated just before may be this pod's own: they took memory, not a pod slot). Units the
  // pod already has (an init container's, reused) were counted there already.
  const auto unit = UnitOf(policy_);
  std::uint64_t fresh = 0;
  for (const auto& id : ids) fresh += count_.allocated.count(id) ? 0u : 1u;
  const auto fit = devices::FindLargestFit(inventory_, count_.expected, policy_);
  if (fresh * unit <= fit.bytes) return "";
  return std::to_string(fresh) + " memory units (" + devices::FormatBytes(fresh * unit) +
         ") fit on no single GPU of this node, and a container's GPU memory must: " +
         devices::FreeUnitsByGpu(inventory_, count_.expected, policy_, unit);
}

void PluginMemoryUnits::Allocated(const std::vector<std::string>& ids) {
  std::lock_guard lock(mutex_);
  answered_.push_back({{ids.begin(), ids.end()}, std::chrono::steady_clock::now()});
}

}  // namespace dxshim::device_plugin
