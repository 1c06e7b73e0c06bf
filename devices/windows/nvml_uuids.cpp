#include "devices/windows/nvml_uuids.h"

#include <windows.h>

#include "devices/device.h"
#include "shim/base/utf8_text.h"

namespace dxshim::devices::windows {
namespace {

// From NVML's nvml.h (the ABI every NVML since R450 keeps): return codes are an int enum with
// NVML_SUCCESS = 0, a device is an opaque pointer, and a UUID fits NVML_DEVICE_UUID_V2_BUFFER_SIZE.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr unsigned kUuidBufferSize = 96;
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using CountFn = NvmlReturn (*)(unsigned*);
using HandleByBusIdFn = NvmlReturn (*)(const char*, NvmlDevice*);
using UuidFn = NvmlReturn (*)(NvmlDevice, char*, unsigned);

template <typename Fn>
Fn Symbol(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

std::string NvmlError(const char* call, NvmlReturn status) {
  return std::string(call) + " failed (NVML error " + std::to_string(status) + ")";
}

}  // namespace

NvmlReport ReadNvmlHere(const std::vector<std::string>& bus_ids) {
  NvmlReport report;
  // System32 only: never a nvml.dll from the current or the program's directory.
  const HMODULE nvml = LoadLibraryExW(L"nvml.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!nvml) {
    report.error = "no NVIDIA UUIDs: nvml.dll could not be loaded from System32 (error " +
                   std::to_string(GetLastError()) + ")";
    return report;
  }
  const auto init = Symbol<InitFn>(nvml, "nvmlInit_v2");
  const auto shutdown = Symbol<ShutdownFn>(nvml, "nvmlShutdown");
  const auto count_of = Symbol<CountFn>(nvml, "nvmlDeviceGetCount_v2");
  const auto by_bus_id = Symbol<HandleByBusIdFn>(nvml, "nvmlDeviceGetHandleByPciBusId_v2");
  const auto uuid_of = Symbol<UuidFn>(nvml, "nvmlDeviceGetUUID");
  if (!init || !shutdown || !by_bus_id || !uuid_of) {
    report.error =
        "no NVIDIA UUIDs: nvml.dll lacks nvmlInit_v2, nvmlShutdown, "
        "nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetUUID";
    FreeLibrary(nvml);
    return report;
  }
  if (const auto status = init(); status != 0) {
    report.error = "no NVIDIA UUIDs: " + NvmlError("nvmlInit_v2", status);
    FreeLibrary(nvml);
    return report;
  }
  unsigned count = 0;
  if (!count_of) {
    report.notes.push_back(
        "nvml.dll lacks nvmlDeviceGetCount_v2: the NVIDIA GPUs it sees are not counted");
  } else if (const auto status = count_of(&count); status != 0) {
    report.notes.push_back(NvmlError("nvmlDeviceGetCount_v2", status));
  } else {
    report.device_count = count;
  }
  for (const auto& id : bus_ids) {
    NvmlDevice device = nullptr;
    char uuid[kUuidBufferSize] = {};
    if (const auto status = by_bus_id(id.c_str(), &device); status != 0) {
      report.misses[id] = NvmlError("nvmlDeviceGetHandleByPciBusId_v2", status);
      continue;
    }
    if (const auto status = uuid_of(device, uuid, kUuidBufferSize); status != 0) {
      report.misses[id] = NvmlError("nvmlDeviceGetUUID", status);
      continue;
    }
    uuid[kUuidBufferSize - 1] = '\0';
    if (!IsNvmlGpuUuid(uuid)) {
      report.misses[id] = "NVML gave '" + EscapeInvalidUtf8(uuid) + "', not a GPU UUID";
      continue;
    }
    report.uuids[id] = uuid;
  }
  shutdown();
  FreeLibrary(nvml);
  return report;
}

}  // namespace dxshim::devices::windows
