// What NVIDIA's libraries answered, as the short-lived child `nvidia-uuids` prints it and discovery
// reads it back (devices/windows/nvidia_query.h runs the child). CUDA lists its devices once per
// process, at cuInit, and a driver update gives the adapters new LUIDs: asking in a child on every
// discovery keeps the answer current, and keeps nvcuda.dll and nvml.dll out of the service.
// Portable, so that the reading and the decisions on it are unit-tested on Linux.
//
// The child prints one JSON object and exits 0:
//   nvidia-uuids cuda         {"cuda": {"error": "...", "notes": [...], "devices": [
//                               {"ordinal": 0, "luid": "0x00000000_0x0000D1B8",
//                                "uuid": "GPU-...", "uuid_call": "cuDeviceGetUuid_v2"},
//                               {"ordinal": 1, "error": "no LUID (cuDeviceGetLuid: ...)"}]}}
//   nvidia-uuids nvml BUSID…  {"nvml": {"error": "...", "notes": [...], "device_count": 4,
//                               "uuids": {"00000001:00:00.0": "GPU-..."},
//                               "misses": {"3b:0.0": "..."}}}
// "error" (the library as a whole gave nothing) and "device_count" (NVML could not count) may be
// absent.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::devices {

// One device CUDA listed: its LUID and UUID, or why it has none.
struct CudaDeviceAnswer {
  int ordinal = 0;
  std::uint64_t luid = 0;
  std::string uuid;       // "GPU-..." as nvmlDeviceGetUUID writes it
  std::string uuid_call;  // cuDeviceGetUuid_v2, or cuDeviceGetUuid on a driver without it
  std::string error;      // set when the device has no LUID or UUID
};

struct CudaReport {
  std::string error;               // "no CUDA: ..." when CUDA gave nothing at all
  bool child_failed = false;       // the child itself hung, crashed or garbled (not written)
  std::vector<std::string> notes;  // facts worth a debug line
  std::vector<CudaDeviceAnswer> devices;
};

struct NvmlReport {
  std::string error;                          // "no NVIDIA UUIDs: ..." when NVML gave nothing
  bool child_failed = false;                  // the child itself failed (not written)
  std::vector<std::string> notes;             // facts worth a debug line
  std::optional<unsigned> device_count;       // every NVIDIA GPU NVML sees (TCC boards included)
  std::map<std::string, std::string> uuids;   // bus id -> "GPU-..."
  std::map<std::string, std::string> misses;  // bus id -> why NVML gave none
};

std::string WriteCudaReport(const CudaReport& report);
std::string WriteNvmlReport(const NvmlReport& report);
// Throw std::runtime_error naming what is wrong with `json`.
CudaReport ReadCudaReport(std::string_view json);
NvmlReport ReadNvmlReport(std::string_view json);

// CUDA's UUIDs by LUID, for the LUID join (gpu_uuids.h): a device with an error, a zero LUID or a
// UUID that is not NVML's form is left out, and a LUID two devices give names neither; each
// reason goes to `debug`.
std::map<std::uint64_t, std::string> CudaUuidsByLuid(const CudaReport& report,
                                                     std::vector<std::string>& debug);

}  // namespace dxshim::devices
