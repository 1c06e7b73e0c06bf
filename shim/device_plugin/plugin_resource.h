// One extended resource the device plugin advertises, as the service sees it: its devices for the
// GPUs and the runtime's record, which ids are its own, and the container annotation Allocate
// answers with. Two resources implement it: pod slots (plugin_slots.h, dxshim.io/gpu) and memory
// units (plugin_memory_units.h, dxshim.io/gpu-memory). Their devices are interchangeable tokens:
// they belong to a GPU only for their health, and kubelet's choice of them never picks a GPU.
#pragma once

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "devices/device_source.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim::device_plugin {

struct PluginDevice {
  std::string id;  // "<kind>-<8 hex digits of the GPU id's hash>-<n>": stable across restarts
  std::string gpu_id;
  bool healthy = true;
  bool operator==(const PluginDevice&) const = default;
};

// Devices in use that the scheduler does not count, from the runtime's record.
struct SchedulerGap {
  // Devices withheld from the scheduler: slots, those used beyond the plugin devices of their
  // pods; memory units, every Unhealthy one (beyond the largest fit, or of a GPU gone).
  unsigned unseen = 0;
  std::set<std::string> counted;  // plugin devices of pods that hold GPUs
  bool operator==(const SchedulerGap&) const = default;
};

class PluginResource {
 public:
  virtual ~PluginResource() = default;

  // The devices to advertise for `inventory`, in a stable order, with those that pods the
  // scheduler does not count hold (worked out from `record`) Unhealthy; `gap` gets what was
  // worked out.
  virtual std::vector<PluginDevice> Advertised(const devices::Inventory& inventory,
                                               const RuntimeRecord& record, SchedulerGap& gap) = 0;
  // Whether `id` is a device this resource ever advertised (listed by Listed).
  bool Known(const std::string& id) const;
  // The container annotation Allocate answers with: the ids kubelet chose, comma separated.
  virtual const char* annotation() const = 0;
  // How logs name one device ("slot", "memory unit").
  virtual const char* noun() const = 0;
  // What a device stands for, for the start-up line ("2 slot(s) per GPU").
  virtual std::string Describe() const = 0;

  // Whether kubelet should call GetPreferredAllocation (DevicePluginOptions).
  virtual bool prefers() const { return false; }
  // GetPreferredAllocation for one container: `size` ids, every one of `must_include` (devices
  // kubelet reuses from the pod's init containers) first, then of `available` in the resource's
  // order of preference.
  virtual std::vector<std::string> Preferred(const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             std::size_t size) {
    return PreferFrom(available, must_include, size);
  }
  // Why kubelet may not give `ids` (all known) to one container, or "": Allocate then refuses,
  // and kubelet rejects the pod at admission. Here an id given twice (the annotation would name
  // it twice, which CreateContainer refuses); a resource adds its own reasons.
  virtual std::string Refusal(const std::vector<std::string>& ids);
  // Allocate gave `ids` to one container.
  virtual void Allocated(const std::vector<std::string>& /*ids*/) {}

 protected:
  // `kind` starts every device id (DeviceId).
  explicit PluginResource(const char* kind) : kind_(kind) {}

  // The devices of `inventory`'s GPUs, `per_gpu(d)` for GPU `d`, in a stable order: every GPU
  // seen since start-up, in order of first sight, with the most devices it ever had, device `n`
  // of GPU `g` named DeviceId(kind, g, n). Healthy: those its GPU has now (present, n below
  // per_gpu); the rest Unhealthy, kept in the list (a GPU that vanished, or has fewer now), so that
  // kubelet lowers its count instead of forgetting devices it may have handed out. Every id
  // listed is Known from then on.
  std::vector<PluginDevice> Listed(const devices::Inventory& inventory,
                                   const std::function<unsigned(const devices::Device&)>& per_gpu);

  // `must_include`, then the first of `ordered` not among them, `size` in all.
  static std::vector<std::string> PreferFrom(const std::vector<std::string>& ordered,
                                             const std::vector<std::string>& must_include,
                                             std::size_t size);

 private:
  const char* const kind_;
  mutable std::mutex listed_mutex_;
  std::vector<std::pair<std::string, unsigned>> gpus_;  // id, the most devices it had
  std::set<std::string> known_;
};

// "<kind>-<8 hex digits>-<n>": a short, stable name for device `n` of a GPU whose id can be longer
// than the 63 characters a device plugin's device ID may have (a PnP instance id); made of the
// characters of a DNS label, as the annotations that carry them require.
std::string DeviceId(const char* kind, const std::string& gpu_id, unsigned n);

// Marks `gap.unseen` more devices Unhealthy, from the end of the list, skipping those already
// Unhealthy and every one in `gap.counted` (a device kubelet gave to a pod holding GPUs).
void MarkHeldOutside(std::vector<PluginDevice>& devices, const SchedulerGap& gap);

}  // namespace dxshim::device_plugin
