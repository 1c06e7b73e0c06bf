// Windows only: NVIDIA GPUs' UUIDs from NVML, the driver's management library, in this process.
// nvml.dll ships with the NVIDIA driver in System32 and is loaded from there at run time, never
// linked. Only the short-lived child `nvidia-uuids nvml` calls this (devices/windows/
// nvidia_query.h): the service never loads the library.
#pragma once

#include <string>
#include <vector>

#include "devices/nvidia_answers.h"

namespace dxshim::devices::windows {

// nvmlInit_v2, nvmlDeviceGetCount_v2 (every NVIDIA GPU NVML sees), then for each PCI bus id
// nvmlDeviceGetHandleByPciBusId_v2 and nvmlDeviceGetUUID, then nvmlShutdown. Never throws: what
// cannot be read is an error or a miss in the report.
NvmlReport ReadNvmlHere(const std::vector<std::string>& bus_ids);

}  // namespace dxshim::devices::windows
