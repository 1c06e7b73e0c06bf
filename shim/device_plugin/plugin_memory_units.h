// The second resource dxshim advertises to kubelet (device-plugin-memory-resource, default
// dxshim.io/gpu-memory): one plugin device per `gpu_memory_unit` (default 1Gi) of each GPU's
// capacity (devices::MemoryCapacity: dedicated memory less gpu-memory-reserved), rounded down.
// The units are interchangeable tokens: a container's count of them is the memory it reserves,
// and dxshim's policy picks the GPU at CreateContainer. A unit is named for a GPU only for its
// health (Unhealthy once its GPU vanished or is marked absent; kept in the list, as are the units
// of a GPU whose memory shrank) and for GetPreferredAllocation.
//
// What kubelet may admit must fit on one GPU, so the healthy count is, at every update,
//   the units kubelet allocated to pods that hold GPUs or have not started yet
//   + the most free units on any one present GPU that also has a pod slot free
// (CountMemory). Kubelet's free count is healthy less allocated (devicemanager's
// devicesToAllocate takes healthy devices not in use), and the scheduler's is allocatable less the
// requests of the pods bound to the node, so both offer exactly that largest fit. Every other
// unit is Unhealthy, never one kubelet allocated (which would leave kubelet's own count too
// generous).
//
// Which units kubelet allocated: the runtime's record (containers carrying
// dxshim.io/plugin-memory-units in sandboxes that hold GPUs), kubelet's own checkpoint
// (kubelet_internal_checkpoint: which pod and container each unit went to, written after every
// allocation), and the Allocate calls answered since the checkpoint last listed them. Units of a
// pod that has not started yet (allocated, no container created) are placed as dxshim's policy
// would place the pod, so that its memory and pod slot are not offered again; a pod known only
// from an Allocate answer (kubelet has not written its checkpoint yet, and may still be allocating
// the pod's other containers) takes memory, not a pod slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/allocation/placement.h"
#include "devices/device_source.h"
#include "shim/device_plugin/plugin_resource.h"
#include "shim/install/kubelet/kubelet_checkpoint.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim::device_plugin {

// How long an Allocate answer counts on its own, before its pod's sandbox exists.
inline constexpr std::chrono::minutes kAnswerKept{2};

// The units `d` is advertised with: its capacity divided by policy.gpu_memory_unit, rounded down.
unsigned MemoryUnitsOf(const devices::Device& d, const devices::AllocationPolicy& policy);

// What the memory count is made of.
struct MemoryCount {
  std::set<std::string> allocated;   // units kubelet gave pods that hold GPUs or have not started
  std::set<std::string> held_units;  // of those, the units of containers that exist
  devices::Usage held;               // the GPUs' use by the record (as serve's ledger has it)
  devices::Usage expected;           // and with the pods that have not started yet placed
  std::uint64_t fit_units = 0;       // the most free units on one GPU with a pod slot
  std::string fit_gpu;               // that GPU's id ("" when none has room)
};

// The count for `inventory` from the runtime's `record`, kubelet's allocations of this resource
// (`kubelet`, from its checkpoint) and Allocate answers whose pod has no sandbox yet (`answered`,
// one set per container); `gpus_of`: how many GPUs each pod (by UID) asked by the slot resource. A
// pod of the checkpoint counts while it holds GPUs, has a ready sandbox (matched by pod UID) or had
// every unit just answered; any other is gone, and kubelet frees its units at its next admission
// before it counts (devicemanager UpdateAllocatedDevices).
MemoryCount CountMemory(const RuntimeRecord& record, const devices::Inventory& inventory,
                        const devices::AllocationPolicy& policy,
                        const std::vector<install::PodDeviceEntry>& kubelet,
                        const std::vector<std::set<std::string>>& answered,
                        const std::map<std::string, unsigned>& gpus_of = {});

class PluginMemoryUnits final : public PluginResource {
 public:
  // `checkpoint`: the path of kubelet's kubelet_internal_checkpoint, "" when there is none to
  // read; `resource`: this resource's name there, `slots_resource` the pod slots' (how many GPUs
  // a pod that has not started asked for).
  explicit PluginMemoryUnits(devices::AllocationPolicy policy, std::string checkpoint = "",
                             std::string resource = "", std::string slots_resource = "");

  // The units for `inventory`: every GPU seen since start-up with the most units it ever had;
  // healthy: every one in `count.allocated` (kubelet's, wherever its GPU is), then
  // `count.fit_units` more of present GPUs (those of count.fit_gpu first); the rest Unhealthy.
  std::vector<PluginDevice> For(const devices::Inventory& inventory, const MemoryCount& count);

  std::vector<PluginDevice> Advertised(const devices::Inventory& inventory,
                                       const RuntimeRecord& record, SchedulerGap& gap) override;
  const char* annotation() const override;
  const char* noun() const override { return "memory unit"; }
  std::string Describe() const override;
  bool prefers() const override { return true; }
  std::vector<std::string> Preferred(const std::vector<std::string>& available,
                                     const std::vector<std::string>& must_include,
                                     std::size_t size) override;
  std::string Refusal(const std::vector<std::string>& ids) override;
  void Allocated(const std::vector<std::string>& ids) override;

  // "mem-<8 hex digits of the GPU id's hash>-<n>".
  static std::string UnitId(const std::string& gpu_id, unsigned n);

 private:
  // The entries of kubelet's checkpoint (none when there is none; the last read when it does not
  // read).
  std::vector<install::PodDeviceEntry> ReadCheckpoint();

  const devices::AllocationPolicy policy_;
  const std::string checkpoint_;
  const std::string resource_;
  const std::string slots_resource_;
  mutable std::mutex mutex_;  // the count; before PluginResource's
  // Allocate answers, one per container, until the record or kubelet's checkpoint accounts for
  // them (their containers exist, or their pod has a sandbox), kAnswerKept at most.
  struct Answer {
    std::set<std::string> ids;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<Answer> answered_;
  // From the latest Advertised: the GPUs and the count, for Preferred and Refusal.
  devices::Inventory inventory_;
  MemoryCount count_;
  std::vector<install::PodDeviceEntry> last_checkpoint_;
};

}  // namespace dxshim::device_plugin
