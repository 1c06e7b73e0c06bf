// Windows only: NVIDIA GPUs' UUIDs from the CUDA driver API, by adapter LUID (cuDeviceGetLuid),
// the exact join with what DXCore reports. nvcuda.dll ships with the NVIDIA driver in System32
// and is loaded from there only, at run time, never linked; cuInit(0) and a few queries per
// device, no context. A node without it, or whose CUDA fails, gets nothing here, and discovery
// falls back to NVML (devices/gpu_uuids.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dxshim::devices::windows {

struct CudaUuids {
  std::map<std::uint64_t, std::string> by_luid;  // HighPart << 32 | LowPart -> "GPU-<uuid>"
  std::vector<std::string> debug;                // why some or all are missing
};

// cuInit(0), cuDeviceGetCount, and for each device cuDeviceGet, cuDeviceGetLuid and
// cuDeviceGetUuid_v2 (cuDeviceGetUuid on drivers without it). Never throws. nvcuda.dll stays
// loaded once cuInit ran: the CUDA driver API has no call that undoes it.
CudaUuids ReadCudaUuids();

}  // namespace dxshim::devices::windows
