// What dxshim advertises to kubelet: one plugin device per pod slot, `slots_per_gpu`
// (max-containers-per-device) for every GPU of the device snapshot, so that the scheduler's count
// is what dxshim admits. A slot is no particular share of its GPU: kubelet's choice of slots only
// says how many GPUs a container gets, and dxshim's policy picks which at CreateContainer. Slots
// belong to a GPU only for their health: healthy while the GPU is present, Unhealthy once it has
// vanished or is marked absent (kept in the list, so that kubelet lowers the allocatable count
// instead of forgetting devices it may have handed out).
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "devices/device_source.h"

namespace dxshim::device_plugin {

struct PluginSlot {
  std::string id;  // "gpu-<8 hex digits of the GPU id's hash>-<n>": stable across restarts
  std::string gpu_id;
  bool healthy = true;
  bool operator==(const PluginSlot&) const = default;
};

class PluginSlots {
 public:
  explicit PluginSlots(unsigned slots_per_gpu) : slots_per_gpu_(slots_per_gpu) {}

  // The slots for `inventory`, in a stable order: every GPU seen since start-up, its slots
  // healthy only if it is present now.
  std::vector<PluginSlot> For(const devices::Inventory& inventory);
  // Whether `id` is a slot this plugin ever advertised.
  bool Known(const std::string& id) const;

  static std::string SlotId(const std::string& gpu_id, unsigned n);

 private:
  const unsigned slots_per_gpu_;
  mutable std::mutex mutex_;
  std::vector<std::string> gpus_;  // every GPU id seen, in order of first sight
  std::set<std::string> known_;
};

}  // namespace dxshim::device_plugin
