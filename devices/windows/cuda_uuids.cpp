#include "devices/windows/cuda_uuids.h"

#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shim/base/comma_list.h"

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

struct Api {
  DeviceFn device_of;
  LuidFn luid_of;
  UuidFn uuid_of;
  const char* uuid_call;
};

template <typename Fn>
Fn Symbol(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

std::string CudaError(const char* call, CuResult status) {
  return std::string(call) + ": CUDA error " + std::to_string(status);
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

CudaDeviceAnswer ReadDevice(int ordinal, const Api& api) {
  CudaDeviceAnswer answer;
  answer.ordinal = ordinal;
  CuDevice device = 0;
  if (const auto status = api.device_of(&device, ordinal); status != 0) {
    answer.error = CudaError("cuDeviceGet", status);
    return answer;
  }
  char luid_bytes[8] = {};
  unsigned int node_mask = 0;
  if (const auto status = api.luid_of(luid_bytes, &node_mask, device); status != 0) {
    answer.error = "no LUID (" + CudaError("cuDeviceGetLuid", status) + ")";
    return answer;
  }
  CuUuid uuid{};
  if (const auto status = api.uuid_of(&uuid, device); status != 0) {
    answer.error = "no UUID (" + CudaError(api.uuid_call, status) + ")";
    return answer;
  }
  LUID luid{};
  std::memcpy(&luid, luid_bytes, sizeof luid);
  answer.luid =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(luid.HighPart)) << 32) | luid.LowPart;
  answer.uuid = GpuUuid(uuid);
  answer.uuid_call = api.uuid_call;
  return answer;
}

}  // namespace

CudaReport ReadCudaHere() {
  CudaReport report;
  // CUDA enumerates only the devices CUDA_VISIBLE_DEVICES names, read once at cuInit: dxshim must
  // see them all (the variable is for its containers, never for it).
  if (GetEnvironmentVariableW(L"CUDA_VISIBLE_DEVICES", nullptr, 0) > 0) {
    SetEnvironmentVariableW(L"CUDA_VISIBLE_DEVICES", nullptr);
    _putenv("CUDA_VISIBLE_DEVICES=");
    report.notes.push_back("CUDA_VISIBLE_DEVICES was set in this process: removed before cuInit");
  }
  // System32 only: never an nvcuda.dll from the current or the program's directory.
  const HMODULE cuda = LoadLibraryExW(L"nvcuda.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!cuda) {
    report.error = "no CUDA: nvcuda.dll could not be loaded from System32 (error " +
                   std::to_string(GetLastError()) + ")";
    return report;
  }
  const auto init = Symbol<InitFn>(cuda, "cuInit");
  const auto count_of = Symbol<CountFn>(cuda, "cuDeviceGetCount");
  Api api{Symbol<DeviceFn>(cuda, "cuDeviceGet"), Symbol<LuidFn>(cuda, "cuDeviceGetLuid"),
          Symbol<UuidFn>(cuda, "cuDeviceGetUuid_v2"), "cuDeviceGetUuid_v2"};
  // The v2 entry (CUDA 11.4 on) differs only for MIG instances, which Windows does not have.
  if (!api.uuid_of) {
    api.uuid_of = Symbol<UuidFn>(cuda, "cuDeviceGetUuid");
    api.uuid_call = "cuDeviceGetUuid";
    if (api.uuid_of)
      report.notes.push_back("nvcuda.dll has no cuDeviceGetUuid_v2: cuDeviceGetUuid used");
  }
  const std::pair<const char*, bool> needed[] = {{"cuInit", init != nullptr},
                                                 {"cuDeviceGetCount", count_of != nullptr},
                                                 {"cuDeviceGet", api.device_of != nullptr},
                                                 {"cuDeviceGetLuid", api.luid_of != nullptr},
                                                 {"cuDeviceGetUuid", api.uuid_of != nullptr}};
  std::vector<std::string> lacking;
  for (const auto& [name, found] : needed) {
    if (!found) lacking.emplace_back(name);
  }
  const std::string missing = JoinList(lacking, ", ");
  if (!missing.empty()) {
    report.error = "no CUDA: nvcuda.dll lacks " + missing + " (a driver before CUDA 10)";
    FreeLibrary(cuda);
    return report;
  }
  if (const auto status = init(0); status != 0) {
    report.error = "no CUDA: " + CudaError("cuInit", status);
    return report;  // left loaded: cuInit may have started what FreeLibrary would pull from under
                    // it
  }
  int count = 0;
  if (const auto status = count_of(&count); status != 0) {
    report.error = "no CUDA: " + CudaError("cuDeviceGetCount", status);
    return report;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal)
    report.devices.push_back(ReadDevice(ordinal, api));
  return report;
}

}  // namespace dxshim::devices::windows
