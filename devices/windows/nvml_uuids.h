// Windows only: NVIDIA GPUs' UUIDs from NVML, the driver's management library. nvml.dll ships with
// the NVIDIA driver in System32 and is loaded from there at run time, never linked: a node
// without NVIDIA's driver (or with one whose NVML fails) simply has no UUIDs.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dxshim::devices::windows {

struct NvmlUuids {
  std::map<std::string, std::string> by_bus_id;  // "bus:device.function" -> "GPU-<uuid>"
  std::vector<std::string> debug;                // why some or all are missing
};

// nvmlInit_v2, then for each PCI bus id nvmlDeviceGetHandleByPciBusId_v2 and nvmlDeviceGetUUID,
// then nvmlShutdown. Never throws: what cannot be read is missing, and said in `debug`.
NvmlUuids ReadNvmlUuids(const std::vector<std::string>& bus_ids);

}  // namespace dxshim::devices::windows
