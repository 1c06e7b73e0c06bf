// Windows only: what the CUDA driver API says of each device, in this process: its adapter LUID
// (cuDeviceGetLuid, the exact join with what DXCore reports) and its UUID. nvcuda.dll ships with
// the NVIDIA driver in System32 and is loaded from there only, at run time, never linked; cuInit(0)
// and a few queries per device, no context. CUDA lists its devices once per process and
// nvcuda.dll cannot be unloaded once cuInit ran, so only the short-lived child `nvidia-uuids cuda`
// calls this (devices/windows/nvidia_query.h); the service never loads the library.
#pragma once

#include "devices/nvidia_answers.h"

namespace dxshim::devices::windows {

// cuInit(0), cuDeviceGetCount, and for each device cuDeviceGet, cuDeviceGetLuid and
// cuDeviceGetUuid_v2 (cuDeviceGetUuid on drivers without it). Never throws: what cannot be read
// is an error in the report. Every device is reported, whatever its driver model: a board in TCC
// mode has no DXCore adapter, so its LUID (if CUDA gives one) matches none.
CudaReport ReadCudaHere();

}  // namespace dxshim::devices::windows
