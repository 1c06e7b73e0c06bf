// The most GPU memory one more shared pod can reserve now on a single GPU: what the scheduler may
// offer through dxshim's memory resource (shim/device_plugin/plugin_memory_units.h). Free memory
// split across GPUs is not one block: two GPUs with 4Gi free each fit a 4Gi pod, not an 8Gi one,
// so a node-wide sum would let kubelet admit pods that dxshim must refuse at CreateContainer.
#pragma once

#include <cstdint>
#include <string>

#include "devices/allocation/allocation_policy.h"
#include "devices/allocation/placement.h"
#include "devices/device_source.h"

namespace dxshim::devices {

struct LargestFit {
  std::uint64_t bytes = 0;         // free on that GPU (0: no GPU has room for another pod)
  const Device* device = nullptr;  // the GPU (first in inventory order on ties), or nullptr
};

// Over the present GPUs of `inventory` that have room for one more shared pod (PodRoom: a pod
// slot free and no exclusive holder), the one with the most free memory (FreeOn).
LargestFit FindLargestFit(const Inventory& inventory, const Usage& usage,
                          const AllocationPolicy& policy);

// "<GPU>: 10 units free, 0 of 1 pod slots free; ..." for every present GPU: how a refusal names
// where memory is, in units of `unit` bytes, rounded down.
std::string FreeUnitsByGpu(const Inventory& inventory, const Usage& usage,
                           const AllocationPolicy& policy, std::uint64_t unit);

}  // namespace dxshim::devices
