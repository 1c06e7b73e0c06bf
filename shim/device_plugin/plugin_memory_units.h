// The second resource dxshim advertises to kubelet (device-plugin-memory-resource, default
// dxshim.io/gpu-memory): one plugin device per `gpu_memory_unit` (default 1Gi) of each GPU's
// capacity (devices::MemoryCapacity: dedicated memory less gpu-memory-reserved), rounded down, so
// that two GPUs of 16Gi give 32 units. Like slots (plugin_slots.h) the units are interchangeable
// tokens: a container's count of them is the memory it reserves, spread evenly over its GPUs, and
// dxshim's policy picks the GPUs at CreateContainer. A unit belongs to a GPU only for its health:
// healthy while the GPU is present, Unhealthy once it has vanished or is marked absent (kept in
// the list, as are the units of a GPU whose memory shrank).
//
// Memory held outside the scheduler's count (a pod that asked by annotation only, or by the slot
// resource only, reserving its dxshim.io/gpu-memory or the default; an exclusive pod, which takes
// its GPUs' whole capacity) is read from the same record of the runtime the ledger is rebuilt
// from, and that many more units are marked Unhealthy, never one kubelet gave to a pod holding
// GPUs. What a node-level count cannot say: free memory split over GPUs so that no single one
// fits a pod (kubelet then admits a pod dxshim refuses, as with N > 1 GPUs by slots).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/device_source.h"
#include "shim/device_plugin/plugin_resource.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim::device_plugin {

// The units `d` is advertised with: its capacity divided by policy.gpu_memory_unit, rounded down.
unsigned MemoryUnitsOf(const devices::Device& d, const devices::AllocationPolicy& policy);

// Each pod holding GPUs holds, on each of its GPUs present in `inventory`, what its hold takes
// from that GPU (devices::HeldGpuMemory: the recorded reservation, the default without one, the
// whole capacity when exclusive) in units, rounded up; each GPU counts for at most its units.
// Kubelet counted the memory units its containers carry (only those of pods holding a present
// GPU). The difference, summed over the node, never below zero. Every memory unit of a pod
// holding GPUs is in `counted`.
SchedulerGap FindMemoryGap(const RuntimeRecord& record, const devices::AllocationPolicy& policy,
                           const devices::Inventory& inventory);

class PluginMemoryUnits final : public PluginResource {
 public:
  explicit PluginMemoryUnits(devices::AllocationPolicy policy);

  // The units for `inventory`, in a stable order: every GPU seen since start-up with the most
  // units it ever had, those it has now healthy only if it is present; then `gap.unseen` more
  // Unhealthy, from the end of the list, none of them a counted unit.
  std::vector<PluginDevice> For(const devices::Inventory& inventory, const SchedulerGap& gap = {});

  std::vector<PluginDevice> Advertised(const devices::Inventory& inventory,
                                       const RuntimeRecord& record, SchedulerGap& gap) override;
  bool Known(const std::string& id) const override;
  const char* annotation() const override;
  const char* noun() const override { return "memory unit"; }
  std::string Describe() const override;

  // "mem-<8 hex digits of the GPU id's hash>-<n>".
  static std::string UnitId(const std::string& gpu_id, unsigned n);

 private:
  const devices::AllocationPolicy policy_;
  mutable std::mutex mutex_;
  // Every GPU id seen, in order of first sight, with the most units it had.
  std::vector<std::pair<std::string, unsigned>> gpus_;
  std::set<std::string> known_;
};

}  // namespace dxshim::device_plugin
