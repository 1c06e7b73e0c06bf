#include "devices/windows/nvml_uuids.h"

#include <windows.h>

#include "devices/device.h"

namespace dxshim::devices::windows {
namespace {

// From NVML's nvml.h (the ABI every NVML since R450 keeps): return codes are an int enum with
// NVML_SUCCESS = 0, a device is an opaque pointer, and a UUID fits NVML_DEVICE_UUID_V2_BUFFER_SIZE.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr unsigned kUuidBufferSize = 96;
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using HandleByBusIdFn = NvmlReturn (*)(const char*, NvmlDevice*);
using UuidFn = NvmlReturn (*)(NvmlDevice, char*, unsigned);

template <typename Fn>
Fn Symbol(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

}  // namespace

NvmlUuids ReadNvmlUuids(const std::vector<std::string>& bus_ids) {
  NvmlUuids out;
  if (bus_ids.empty()) return out;
  // System32 only: never a nvml.dll from the current or the program's directory.
  const HMODULE nvml = LoadLibraryExW(L"nvml.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!nvml) {
    out.debug.push_back("no NVIDIA UUIDs: nvml.dll could not be loaded from System32 (error " +
                        std::to_string(GetLastError()) + ")");
    return out;
  }
  const auto init = Symbol<InitFn>(nvml, "nvmlInit_v2");
  const auto shutdown = Symbol<ShutdownFn>(nvml, "nvmlShutdown");
  const auto by_bus_id = Symbol<HandleByBusIdFn>(nvml, "nvmlDeviceGetHandleByPciBusId_v2");
  const auto uuid_of = Symbol<UuidFn>(nvml, "nvmlDeviceGetUUID");
  if (!init || !shutdown || !by_bus_id || !uuid_of) {
    out.debug.push_back(
        "no NVIDIA UUIDs: nvml.dll lacks nvmlInit_v2, nvmlShutdown, "
        "nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetUUID");
    FreeLibrary(nvml);
    return out;
  }
  if (const auto status = init(); status != 0) {
    out.debug.push_back("no NVIDIA UUIDs: nvmlInit_v2 failed (NVML error " +
                        std::to_string(status) + ")");
    FreeLibrary(nvml);
    return out;
  }
  for (const auto& id : bus_ids) {
    NvmlDevice device = nullptr;
    char uuid[kUuidBufferSize] = {};
    if (const auto status = by_bus_id(id.c_str(), &device); status != 0) {
      out.debug.push_back("no UUID for PCI " + id +
                          ": nvmlDeviceGetHandleByPciBusId_v2 failed (NVML error " +
                          std::to_string(status) + ")");
      continue;
    }
    if (const auto status = uuid_of(device, uuid, kUuidBufferSize); status != 0) {
      out.debug.push_back("no UUID for PCI " + id + ": nvmlDeviceGetUUID failed (NVML error " +
                          std::to_string(status) + ")");
      continue;
    }
    uuid[kUuidBufferSize - 1] = '\0';
    if (!IsNvmlGpuUuid(uuid)) {
      out.debug.push_back("no UUID for PCI " + id + ": NVML gave '" + std::string(uuid) +
                          "', not a GPU UUID");
      continue;
    }
    out.by_bus_id[id] = uuid;
  }
  shutdown();
  FreeLibrary(nvml);
  return out;
}

}  // namespace dxshim::devices::windows
