// The environment variables that tell a container which GPUs it was given, in forms its apps and
// runtimes understand. Windows lists every GPU of the host in a process-isolated container
// (microsoft/Windows-Containers#333), so the container must be told which ones are its own.
//   CUDA_VISIBLE_DEVICES       GPU-<uuid>,...  NVIDIA GPUs, when each one given has a known UUID
//                              (CUDA takes UUIDs there, so it holds however many GPUs are shown)
//   DXSHIM_GPU_LUIDS           0x00000000_0x0000D1A2,... (devices::FormatLuid: high part, low
//                              part), the LUIDs DXGI EnumAdapterByLuid / DXCore GetAdapterByLuid
//                              take (a process-isolated container shares the host's kernel, so
//                              these are the LUIDs it sees)
//   DXSHIM_GPU_LOCATION_PATHS  the PnP location paths (the device nodes on the linux target)
//   DXSHIM_GPU_VENDOR_IDS      0x10de,...
//   DXSHIM_GPU_MEMORY_BYTES    the bytes of GPU memory this container may use on each GPU: its
//                              own memory units (its dxshim.io/gpu-memory limit) over its GPUs
//                              when it was given some, else what its pod reserved there (the
//                              smallest, when they differ). Its budget; advisory: Windows has no
//                              per-process limit for process-isolated containers.
//   DXSHIM_GPU_MEMORY_TOTAL_BYTES  each GPU's dedicated memory (the smallest, with several GPUs):
//                              budget / total is the container's share of the GPU (pods reserve
//                              from the total less gpu-memory-reserved, so the shares of all pods
//                              add up to less than 1 when the host keeps some).
// Each lists the GPUs in allocation order. No index-based variable: the order in which a
// container's runtime numbers GPUs is not dxshim's to know.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "devices/device.h"

namespace dxshim {

inline constexpr char kCudaVisibleDevicesEnv[] = "CUDA_VISIBLE_DEVICES";
inline constexpr char kGpuMemoryBytesEnv[] = "DXSHIM_GPU_MEMORY_BYTES";
inline constexpr char kGpuMemoryTotalBytesEnv[] = "DXSHIM_GPU_MEMORY_TOTAL_BYTES";

struct GpuEnvironment {
  std::vector<std::pair<std::string, std::string>> variables;  // in the order above
  std::vector<std::string> notes;                              // what was not set and why
};

// `budget`: the bytes the container may use on each of `devices` (nullopt: no budget variable).
GpuEnvironment GpuEnvironmentFor(const std::vector<devices::Device>& devices,
                                 std::optional<std::uint64_t> budget = std::nullopt);

}  // namespace dxshim
