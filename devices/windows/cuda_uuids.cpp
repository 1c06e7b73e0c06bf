#include "devices/windows/cuda_uuids.h"

#include <windows.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <utility>

#include "devices/device.h"

namespace dxshim::devices::windows {
namespace {

// From the CUDA driver API (cuda.h, CUDA 10.0 and later): CUresult is an int-sized enum with
// CUDA_SUCCESS = 0, CUdevice an int, CUuuid 16 bytes, the LUID 8 bytes laid out as Windows' LUID
// (LowPart, then HighPart); CUDAAPI is __stdcall on Windows (the same as the default on x64).
using CuResult = int;
using CuDevice = int;
struct CuUuid {
  unsigned char bytes[16];
};
using InitFn = CuResult(__stdcall*)(unsigned int);
using CountFn = CuResult(__stdcall*)(int*);
using DeviceFn = CuResult(__stdcall*)(CuDevice*, int);
using LuidFn = CuResult(__stdcall*)(char*, unsigned int*, CuDevice);
using UuidFn = CuResult(__stdcall*)(CuUuid*, CuDevice);
using AttributeFn = CuResult(__stdcall*)(int*, int, CuDevice);
constexpr int kAttributeTccDriver = 35;  // CU_DEVICE_ATTRIBUTE_TCC_DRIVER

struct Api {
  DeviceFn device_of;
  LuidFn luid_of;
  UuidFn uuid_of;
  AttributeFn attribute_of;  // may be null: then TCC is not asked about
};

template <typename Fn>
Fn Symbol(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

// "GPU-" and the 16 bytes as 8-4-4-4-12 lower-case hex digits: the form nvmlDeviceGetUUID
// returns and CUDA_VISIBLE_DEVICES takes.
std::string GpuUuid(const CuUuid& uuid) {
  char text[48];
  const unsigned char* b = uuid.bytes;
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

// One device's LUID and UUID, or nullopt with a debug line in `out` saying what failed.
std::optional<std::pair<std::uint64_t, std::string>> ReadDevice(int ordinal, const Api& api,
                                                                CudaUuids& out) {
  const auto which = "CUDA device " + std::to_string(ordinal);
  CuDevice device = 0;
  if (const auto status = api.device_of(&device, ordinal); status != 0) {
    out.debug.push_back(which + ": cuDeviceGet failed (CUDA error " + std::to_string(status) + ")");
    return std::nullopt;
  }
  // A board in TCC mode has no WDDM adapter, so no LUID (CUDA calls it undefined there): NVML
  // may still name it.
  int tcc = 0;
  if (api.attribute_of && api.attribute_of(&tcc, kAttributeTccDriver, device) == 0 && tcc != 0) {
    out.debug.push_back(which + ": in TCC mode, so no LUID");
    return std::nullopt;
  }
  char luid_bytes[8] = {};
  unsigned int node_mask = 0;
  if (const auto status = api.luid_of(luid_bytes, &node_mask, device); status != 0) {
    out.debug.push_back(which + ": no LUID (cuDeviceGetLuid: CUDA error " + std::to_string(status) +
                        ")");
    return std::nullopt;
  }
  if (std::all_of(std::begin(luid_bytes), std::end(luid_bytes), [](char c) { return c == 0; })) {
    out.debug.push_back(which + ": no LUID (cuDeviceGetLuid gave zeros)");
    return std::nullopt;
  }
  CuUuid uuid{};
  if (const auto status = api.uuid_of(&uuid, device); status != 0) {
    out.debug.push_back(which + ": cuDeviceGetUuid failed (CUDA error " + std::to_string(status) +
                        ")");
    return std::nullopt;
  }
  LUID luid{};
  std::memcpy(&luid, luid_bytes, sizeof luid);
  const auto key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(luid.HighPart)) << 32) | luid.LowPart;
  auto text = GpuUuid(uuid);
  if (!IsNvmlGpuUuid(text)) {
    out.debug.push_back(which + ": CUDA gave '" + text + "', not a GPU UUID");
    return std::nullopt;
  }
  return std::make_pair(key, std::move(text));
}

}  // namespace

CudaUuids ReadCudaUuids() {
  CudaUuids out;
  // CUDA enumerates only the devices CUDA_VISIBLE_DEVICES names, read once at cuInit: dxshim must
  // see them all (the variable is for its containers, never for it).
  if (GetEnvironmentVariableW(L"CUDA_VISIBLE_DEVICES", nullptr, 0) > 0) {
    SetEnvironmentVariableW(L"CUDA_VISIBLE_DEVICES", nullptr);
    _putenv("CUDA_VISIBLE_DEVICES=");
    out.debug.push_back("CUDA_VISIBLE_DEVICES was set in this process: removed before cuInit");
  }
  // System32 only: never an nvcuda.dll from the current or the program's directory.
  const HMODULE cuda = LoadLibraryExW(L"nvcuda.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!cuda) {
    out.debug.push_back("no CUDA: nvcuda.dll could not be loaded from System32 (error " +
                        std::to_string(GetLastError()) + ")");
    return out;
  }
  const auto init = Symbol<InitFn>(cuda, "cuInit");
  const auto count_of = Symbol<CountFn>(cuda, "cuDeviceGetCount");
  Api api{Symbol<DeviceFn>(cuda, "cuDeviceGet"), Symbol<LuidFn>(cuda, "cuDeviceGetLuid"),
          Symbol<UuidFn>(cuda, "cuDeviceGetUuid_v2"),
          Symbol<AttributeFn>(cuda, "cuDeviceGetAttribute")};
  // The v2 entry (CUDA 11.4 on) differs only for MIG instances, which Windows does not have.
  if (!api.uuid_of) api.uuid_of = Symbol<UuidFn>(cuda, "cuDeviceGetUuid");
  if (!init || !count_of || !api.device_of || !api.luid_of || !api.uuid_of) {
    out.debug.push_back(
        "no CUDA: nvcuda.dll lacks cuInit, cuDeviceGetCount, cuDeviceGet, cuDeviceGetLuid or "
        "cuDeviceGetUuid (a driver before CUDA 10)");
    FreeLibrary(cuda);
    return out;
  }
  if (const auto status = init(0); status != 0) {
    out.debug.push_back("no CUDA: cuInit failed (CUDA error " + std::to_string(status) + ")");
    return out;  // left loaded: cuInit may have started what FreeLibrary would pull from under it
  }
  int count = 0;
  if (const auto status = count_of(&count); status != 0) {
    out.debug.push_back("no CUDA: cuDeviceGetCount failed (CUDA error " + std::to_string(status) +
                        ")");
    return out;
  }
  std::map<std::uint64_t, int> seen;  // a LUID two devices give names neither
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto found = ReadDevice(ordinal, api, out);
    if (!found) continue;
    if (++seen[found->first] > 1) {
      out.debug.push_back("CUDA device " + std::to_string(ordinal) + ": its LUID " +
                          FormatLuid(found->first) + " is another CUDA device's too");
      out.by_luid.erase(found->first);
      continue;
    }
    out.by_luid.emplace(found->first, std::move(found->second));
  }
  return out;
}

}  // namespace dxshim::devices::windows
