#include "shim/device_plugin/plugin_memory_units.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "devices/allocation/gpu_memory.h"
#include "devices/dxshim_keys.h"

namespace dxshim::device_plugin {
namespace {

// The unit, never 0 (the option table refuses less than 1Mi; this guards a policy made in code).
std::uint64_t UnitOf(const devices::AllocationPolicy& policy) {
  return policy.gpu_memory_unit ? policy.gpu_memory_unit : std::uint64_t{1} << 30;
}

unsigned Clamped(std::uint64_t n) {
  return static_cast<unsigned>(std::min<std::uint64_t>(n, std::numeric_limits<unsigned>::max()));
}

}  // namespace

unsigned MemoryUnitsOf(const devices::Device& d, const devices::AllocationPolicy& policy) {
  return Clamped(devices::MemoryCapacity(d, policy) / UnitOf(policy));
}

SchedulerGap FindMemoryGap(const RuntimeRecord& record, const devices::AllocationPolicy& policy,
                           const devices::Inventory& inventory) {
  // A pod holds each GPU once, with the first reservation its containers recorded for it (as the
  // ledger merges them).
  struct Pod {
    std::map<std::string, std::optional<std::uint64_t>> memory;
    std::set<std::string> units;
    bool exclusive = false;
  };
  std::map<std::string, Pod> pods;
  for (const auto& c : record.containers) {
    if (!HoldsDevices(record, c)) continue;
    auto& pod = pods[c.sandbox_id];
    for (std::size_t i = 0; i < c.device_ids.size(); ++i) {
      const auto [it, added] = pod.memory.emplace(c.device_ids[i], c.MemoryOn(i));
      if (!added && !it->second) it->second = c.MemoryOn(i);
    }
    pod.units.insert(c.plugin_memory_units.begin(), c.plugin_memory_units.end());
    pod.exclusive = pod.exclusive || c.exclusive;
  }
  // Units in use per present GPU: an absent one's units are Unhealthy already.
  struct Use {
    const devices::Device* device;
    std::uint64_t units = 0;
  };
  std::map<std::string, Use> used;
  for (const auto& d : inventory.devices) {
    if (d.present) used.emplace(d.id, Use{&d, 0});
  }
  const auto unit = UnitOf(policy);
  SchedulerGap gap;
  std::set<std::string> counted_here;  // memory units of pods on a present GPU
  for (const auto& [sandbox, pod] : pods) {
    gap.counted.insert(pod.units.begin(), pod.units.end());
    bool here = false;
    for (const auto& [gpu, memory] : pod.memory) {
      const auto it = used.find(gpu);
      if (it == used.end()) continue;
      const auto held = devices::HeldGpuMemory(*it->second.device, memory, pod.exclusive, policy);
      it->second.units += held / unit + (held % unit ? 1 : 0);
      here = true;
    }
    if (here) counted_here.insert(pod.units.begin(), pod.units.end());
  }
  std::uint64_t in_use = 0;
  for (const auto& [gpu, use] : used) {
    in_use += std::min<std::uint64_t>(use.units, MemoryUnitsOf(*use.device, policy));
  }
  gap.unseen = in_use > counted_here.size() ? Clamped(in_use - counted_here.size()) : 0u;
  return gap;
}

PluginMemoryUnits::PluginMemoryUnits(devices::AllocationPolicy policy)
    : policy_(std::move(policy)) {}

std::string PluginMemoryUnits::UnitId(const std::string& gpu_id, unsigned n) {
  return DeviceId("mem", gpu_id, n);
}

const char* PluginMemoryUnits::annotation() const { return keys::kPluginMemoryUnitsAnnotation; }

std::string PluginMemoryUnits::Describe() const {
  std::string out = "one memory unit per " + devices::FormatBytes(UnitOf(policy_)) + " of each GPU";
  if (policy_.gpu_memory_reserved) {
    out += " (less " + devices::FormatBytes(policy_.gpu_memory_reserved) + " kept for the host)";
  }
  return out;
}

std::vector<PluginDevice> PluginMemoryUnits::Advertised(const devices::Inventory& inventory,
                                                        const RuntimeRecord& record,
                                                        SchedulerGap& gap) {
  gap = FindMemoryGap(record, policy_, inventory);
  return For(inventory, gap);
}

std::vector<PluginDevice> PluginMemoryUnits::For(const devices::Inventory& inventory,
                                                 const SchedulerGap& gap) {
  std::lock_guard lock(mutex_);
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
  for (const auto& [gpu, most] : gpus_) {
    const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&](const devices::Device& d) { return d.id == gpu; });
    const unsigned healthy =
        it != inventory.devices.end() && it->present ? MemoryUnitsOf(*it, policy_) : 0u;
    for (unsigned n = 0; n < most; ++n) {
      PluginDevice unit{UnitId(gpu, n), gpu, n < healthy};
      known_.insert(unit.id);
      units.push_back(std::move(unit));
    }
  }
  MarkHeldOutside(units, gap);
  return units;
}

bool PluginMemoryUnits::Known(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return known_.count(id) > 0;
}

}  // namespace dxshim::device_plugin
