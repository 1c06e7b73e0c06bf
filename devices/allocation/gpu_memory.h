// GPU memory as a shared GPU is divided by it: what a GPU can give to pods, what a pod takes from
// it, and how amounts are written in messages. Windows offers no per-process limit for
// process-isolated containers, so a reservation is a promise between pods that dxshim keeps by
// refusing what does not fit, not a limit the GPU enforces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "devices/allocation/allocation_policy.h"
#include "devices/device.h"

namespace dxshim::devices {

// What pods may reserve on `d`: its dedicated memory less policy.gpu_memory_reserved (0 when the
// host keeps it all).
std::uint64_t MemoryCapacity(const Device& d, const AllocationPolicy& policy);

// What a shared pod that names no amount reserves on `d`: policy.default_gpu_memory, or when that
// is 0 the capacity divided by max_containers_per_device (so that a configuration from before
// memory was counted admits exactly the pods it admitted).
std::uint64_t DefaultGpuMemory(const Device& d, const AllocationPolicy& policy);

// What a hold takes from `d`: the whole capacity when exclusive, else what was recorded for it,
// or the default when nothing was (a hold from before memory was counted, or devices someone
// else assigned).
std::uint64_t HeldGpuMemory(const Device& d, std::optional<std::uint64_t> recorded, bool exclusive,
                            const AllocationPolicy& policy);

// The value of the dxshim.io/gpu-memory annotation: a Kubernetes quantity in bytes (6Gi, 512Mi,
// 6442450944). Throws std::invalid_argument saying what is wrong: not a quantity, zero or
// negative, or a plain number below 1Mi (bytes where a unit was meant: "6" is six bytes).
std::uint64_t ParseGpuMemory(const std::string& text);

// "6Gi", "1536Mi", "100Ki", "7B": the largest binary unit that divides `bytes`.
std::string FormatBytes(std::uint64_t bytes);

}  // namespace dxshim::devices
