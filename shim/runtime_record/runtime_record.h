// What the runtime says about who holds GPUs: its sandboxes that are ready, and its containers
// that were given devices (the dxshim.io/devices label dxshim put on them). The ledger is rebuilt
// from it (ledger.h), and the device plugin counts the slots the scheduler does not see from it
// (shim/device_plugin/plugin_slots.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/v1/api.pb.h"

namespace dxshim {

// A container as the runtime lists it, with what its labels say it was given.
struct RecordedContainer {
  std::string container_id;
  std::string sandbox_id;
  std::string name;  // its CRI metadata name (the pod spec's container name)
  std::vector<std::string> device_ids;
  bool exclusive = false;
  bool exited = false;  // known to have exited (any other state may still run)
  // The device plugin slots kubelet gave it (its dxshim.io/plugin-slots annotation), if any.
  std::vector<std::string> plugin_slots;
  // The memory units kubelet gave it (its dxshim.io/plugin-memory-units annotation), if any.
  std::vector<std::string> plugin_memory_units;
  // Bytes of GPU memory reserved on each device, in device_ids' order (its dxshim.io/gpu-memory
  // label); empty when it has none, or none dxshim can read (created before memory was counted):
  // such a hold counts as the default (devices/allocation/gpu_memory.h).
  std::vector<std::uint64_t> memory;

  // What it reserved on device_ids[i], if its label says.
  std::optional<std::uint64_t> MemoryOn(std::size_t i) const;
};

// A sandbox holds its containers' devices while it is ready, or while one of them may still run
// (a sandbox whose pause process died is not ready, but kubelet has not stopped its containers
// yet).
struct RuntimeRecord {
  std::set<std::string> ready_sandboxes;
  // "namespace/name" of every sandbox listed, from its metadata: how messages and metrics name
  // the pods that hold GPUs.
  std::map<std::string, std::string> pod_names;
  // The pod UID of every sandbox listed (kubelet's pod.UID in the sandbox's metadata): how the
  // device plugin matches kubelet's checkpoint to sandboxes.
  std::map<std::string, std::string> pod_uids;
  std::vector<RecordedContainer> containers;
};

// Whether `container` makes its sandbox hold devices: the rule the ledger's resync applies.
bool HoldsDevices(const RuntimeRecord& runtime, const RecordedContainer& container);

// How many sandboxes hold devices by the record alone.
std::size_t HoldingPods(const RuntimeRecord& runtime);

// What a ListPodSandbox and a ListContainers answer say about who holds devices: the ready
// sandboxes, and every container whose dxshim.io/devices label names at least one device.
RuntimeRecord ReadRuntimeRecord(const runtime::v1::ListPodSandboxResponse& sandboxes,
                                const runtime::v1::ListContainersResponse& containers);

// The runtime handler of every sandbox a ListPodSandbox answer lists.
std::map<std::string, std::string> ReadSandboxHandlers(
    const runtime::v1::ListPodSandboxResponse& sandboxes);

}  // namespace dxshim
