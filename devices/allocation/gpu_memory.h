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

// Whether an amount of GPU memory may be zero: not for what a pod reserves, but for what the host
// keeps (gpu-memory-reserved).
enum class ZeroGpuMemory { kRefused, kAllowed };

// An amount of GPU memory: the dxshim.io/gpu-memory annotation and serve's default-gpu-memory,
// gpu-memory-reserved and gpu-memory-unit, which give the same errors. A Kubernetes quantity of
// bytes (devices/byte_quantity.h: 6Gi, 512Mi, 1.5Gi, 6e9, 6442450944; a fraction of a byte rounded
// up) of at least 1Mi whatever its unit, or zero where `zero` allows. Throws std::invalid_argument
// whose what() says what is wrong without repeating the text (the caller names it): "is not a
// quantity of memory such as ...", "is negative; ...", "is zero; ...", "is too large: ...", "has no
// unit: that is 6 bytes; ..." (a plain number below 1Mi: bytes where a unit was meant) or "is less
// than 1Mi; ...".
std::uint64_t ParseGpuMemory(const std::string& text, ZeroGpuMemory zero = ZeroGpuMemory::kRefused);

// "6Gi", "1536Mi", "100Ki", "7B": the largest binary unit that divides `bytes`.
std::string FormatBytes(std::uint64_t bytes);

}  // namespace dxshim::devices
