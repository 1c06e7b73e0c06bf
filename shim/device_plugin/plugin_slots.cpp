#include "shim/device_plugin/plugin_slots.h"

#include <algorithm>
#include <map>
#include <set>

#include "shim/base/dxshim_keys.h"

namespace dxshim::device_plugin {

std::string PluginSlots::SlotId(const std::string& gpu_id, unsigned n) {
  return DeviceId("gpu", gpu_id, n);
}

const char* PluginSlots::annotation() const { return keys::kPluginSlotsAnnotation; }

std::string PluginSlots::Describe() const {
  return std::to_string(slots_per_gpu_) + " slot(s) per GPU";
}

SchedulerGap FindSchedulerGap(const RuntimeRecord& record, unsigned slots_per_gpu,
                              const devices::Inventory& inventory) {
  struct Pod {
    std::set<std::string> gpus, slots;
    bool exclusive = false;
  };
  std::map<std::string, Pod> pods;
  for (const auto& c : record.containers) {
    if (!HoldsDevices(record, c)) continue;
    auto& pod = pods[c.sandbox_id];
    pod.gpus.insert(c.device_ids.begin(), c.device_ids.end());
    pod.slots.insert(c.plugin_slots.begin(), c.plugin_slots.end());
    pod.exclusive = pod.exclusive || c.exclusive;
  }
  // Slots in use per present GPU: an absent one's slots are Unhealthy already.
  std::map<std::string, unsigned> used;
  for (const auto& d : inventory.devices) {
    if (d.present) used.emplace(d.id, 0u);
  }
  SchedulerGap gap;
  std::set<std::string> counted_here;  // plugin slots of pods on a present GPU
  for (const auto& [sandbox, pod] : pods) {
    gap.counted.insert(pod.slots.begin(), pod.slots.end());
    bool here = false;
    for (const auto& gpu : pod.gpus) {
      const auto it = used.find(gpu);
      if (it == used.end()) continue;
      it->second += pod.exclusive ? slots_per_gpu : 1u;
      here = true;
    }
    if (here) counted_here.insert(pod.slots.begin(), pod.slots.end());
  }
  std::size_t in_use = 0;
  for (const auto& [gpu, n] : used) in_use += std::min(n, slots_per_gpu);
  gap.unseen =
      in_use > counted_here.size() ? static_cast<unsigned>(in_use - counted_here.size()) : 0u;
  return gap;
}

std::vector<PluginDevice> PluginSlots::Advertised(const devices::Inventory& inventory,
                                                  const RuntimeRecord& record, SchedulerGap& gap) {
  gap = FindSchedulerGap(record, slots_per_gpu_, inventory);
  return For(inventory, gap);
}

std::vector<PluginDevice> PluginSlots::For(const devices::Inventory& inventory,
                                           const SchedulerGap& gap) {
  auto slots = Listed(inventory, [this](const devices::Device&) { return slots_per_gpu_; });
  MarkHeldOutside(slots, gap);
  return slots;
}

}  // namespace dxshim::device_plugin
