// What dxshim advertises to kubelet: one plugin device per pod slot, `slots_per_gpu`
// (max-containers-per-device) for every GPU of the device snapshot, so that the scheduler's count
// is what dxshim admits. A slot is no particular share of its GPU: kubelet's choice of slots only
// says how many GPUs a container gets, and dxshim's policy picks which at CreateContainer. Slots
// belong to a GPU only for their health: healthy while the GPU is present, Unhealthy once it has
// vanished or is marked absent (kept in the list, so that kubelet lowers the allocatable count
// instead of forgetting devices it may have handed out).
//
// Pods the scheduler does not count also take slots: a pod that asked only by annotation or only
// by the memory resource (plugin_memory_units.h), and an exclusive pod (it takes all of its GPU's
// slots, the scheduler counts one). The plugin reads the same record of the runtime the ledger is
// rebuilt from and marks that many more slots Unhealthy, never one kubelet gave to a pod holding
// GPUs, so that kubelet's allocatable count is what dxshim will still admit.
#pragma once

#include <string>
#include <vector>

#include "devices/device_source.h"
#include "shim/device_plugin/plugin_resource.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim::device_plugin {

// Each pod holding GPUs uses one slot per GPU, all `slots_per_gpu` of a GPU it holds
// exclusively; kubelet counted the plugin slots its containers carry. Only GPUs present in
// `inventory` count, each for at most its `slots_per_gpu` (a hold on a GPU this node does not
// have, or no longer has, takes no slot: a replaced GPU, a changed inventory, labels written by
// another tool), and only the plugin slots of pods holding such a GPU. The difference, summed
// over the node (a pod whose containers each took slots for one shared GPU makes up for
// another's), never below zero. Every plugin slot of a pod holding GPUs is in `counted`.
SchedulerGap FindSchedulerGap(const RuntimeRecord& record, unsigned slots_per_gpu,
                              const devices::Inventory& inventory);

class PluginSlots final : public PluginResource {
 public:
  explicit PluginSlots(unsigned slots_per_gpu)
      : PluginResource("gpu"), slots_per_gpu_(slots_per_gpu) {}

  // The slots for `inventory`, in a stable order: every GPU seen since start-up, its slots
  // healthy only if it is present now; then `gap.unseen` more Unhealthy, from the end of the
  // list, none of them a counted slot.
  std::vector<PluginDevice> For(const devices::Inventory& inventory, const SchedulerGap& gap = {});
  unsigned slots_per_gpu() const { return slots_per_gpu_; }

  std::vector<PluginDevice> Advertised(const devices::Inventory& inventory,
                                       const RuntimeRecord& record, SchedulerGap& gap) override;
  const char* annotation() const override;
  const char* noun() const override { return "slot"; }
  std::string Describe() const override;

  // "gpu-<8 hex digits of the GPU id's hash>-<n>".
  static std::string SlotId(const std::string& gpu_id, unsigned n);

 private:
  const unsigned slots_per_gpu_;
};

}  // namespace dxshim::device_plugin
