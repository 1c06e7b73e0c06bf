// A stand-in nvcuda.dll (the CUDA driver API) for the wine test of dxshim-devices.exe
// (tests/devices/windows/devices_exe_test.sh). Wine has no NVIDIA driver and this machine no GPU,
// so the test installs this DLL into the Wine prefix's System32 and dxshim-devices.exe's
// `nvidia-uuids cuda` child loads it the way it loads the real one. It knows two GPUs whose LUIDs
// are the stand-in dxcore.dll's two NVIDIA adapters, listed in the reverse of DXCore's order, with
// the UUIDs the stand-in nvml.dll gives the same GPUs. Written from the CUDA driver API as cuda.h
// declares it: CUresult an int (CUDA_SUCCESS 0, CUDA_ERROR_INVALID_VALUE 1,
// CUDA_ERROR_NOT_INITIALIZED 3, CUDA_ERROR_NO_DEVICE 100, CUDA_ERROR_INVALID_DEVICE 101,
// CUDA_ERROR_NOT_SUPPORTED 801), CUdevice an int, a UUID 16 bytes, a LUID 8 bytes laid out as
// Windows' LUID. Like CUDA, it reads what it lists once, at the process's first cuInit:
// CUDA_VISIBLE_DEVICES (the GPUs it names, by UUID here) and the LUIDs, which follow the stand-in
// driver's generation (fake_gpu_generation.h) as of cuInit, so a process that asked before a driver
// update keeps the old LUIDs, as it would with the real library. Each load is logged
// (fake_gpu::LogLoad). DXSHIM_FAKE_NVCUDA chooses a behaviour:
//   init-fails  cuInit fails as it does with no usable GPU (CUDA_ERROR_NO_DEVICE);
//   hang        cuInit never returns (it counts in C:\fake-nvcuda-heartbeat meanwhile);
//   crash       cuInit dereferences a null pointer (an access violation);
//   tcc         every device reads CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 1 (its LUID still answered);
//   zero-luid   device 0's LUID is zeros;
//   luid-fails  device 0's cuDeviceGetLuid fails (CUDA_ERROR_NOT_SUPPORTED, as off Windows);
//   same-luid   device 1 answers device 0's LUID.
// Built three ways (tests/CMakeLists.txt): whole; FAKE_NVCUDA_V1_UUID (cuDeviceGetUuid, no _v2,
// a driver before CUDA 11.4); FAKE_NVCUDA_NO_LUID (no cuDeviceGetLuid: before CUDA 10). It proves
// the loading, the LUID join and the fallbacks; it cannot prove the real nvcuda.dll (only a
// Windows node can).
#include <windows.h>

#include <cstdio>
#include <cstring>

#include "tests/devices/windows/fake_gpu_generation.h"

namespace {

struct FakeDevice {
  LUID luid;
  unsigned char uuid[16];
};

// DXCore lists the T4 (LUID 0xd1a7) before the A10 (0xd1b8): CUDA lists them the other way.
constexpr FakeDevice kDevices[] = {
    {{0x0000d1b8, 0},
     {0xa1, 0x0a, 0x10, 0xa1, 0x0b, 0x2c, 0x4d, 0x3e, 0x9f, 0x40, 0xc0, 0xff, 0xee, 0x00, 0x00,
      0x02}},
    {{0x0000d1a7, 0},
     {0x7d, 0x1a, 0xc1, 0xe5, 0x9d, 0x4b, 0x4c, 0x2a, 0x8f, 0x3e, 0xc0, 0xff, 0xee, 0x00, 0x00,
      0x01}},
};
constexpr int kCount = static_cast<int>(sizeof kDevices / sizeof kDevices[0]);

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNotInitialized = 3;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kNotSupported = 801;
constexpr int kAttributeTccDriver = 35;

bool initialized = false;
int visible[sizeof kDevices / sizeof kDevices[0]] = {};  // ordinal -> index into kDevices
int visible_count = 0;
DWORD generation = 0;  // the driver's, as of cuInit

bool Mode(const char* mode) {
  char value[32] = {};
  const DWORD n = GetEnvironmentVariableA("DXSHIM_FAKE_NVCUDA", value, sizeof value);
  return n > 0 && n < sizeof value && std::strcmp(value, mode) == 0;
}

int Check(int device) {
  if (!initialized) return kNotInitialized;
  return device >= 0 && device < visible_count ? kSuccess : kInvalidDevice;
}

// CUDA_VISIBLE_DEVICES, read once, as CUDA reads it: unset, every GPU; set, those it names.
void ChooseVisible() {
  char names[512] = {};
  const DWORD n = GetEnvironmentVariableA("CUDA_VISIBLE_DEVICES", names, sizeof names);
  visible_count = 0;
  for (int i = 0; i < kCount; ++i) {
    const unsigned char* b = kDevices[i].uuid;
    char uuid[48];
    std::snprintf(uuid, sizeof uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    if (n == 0 || std::strstr(names, uuid) != nullptr) visible[visible_count++] = i;
  }
}

int Uuid(unsigned char* uuid, int device) {
  if (const int status = Check(device); status != kSuccess) return status;
  if (!uuid) return kInvalidValue;
  std::memcpy(uuid, kDevices[visible[device]].uuid, sizeof kDevices[0].uuid);
  return kSuccess;
}

}  // namespace

extern "C" {

BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID) {
  if (reason == DLL_PROCESS_ATTACH) fake_gpu::LogLoad("nvcuda.dll");
  return TRUE;
}

__declspec(dllexport) int __stdcall cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  if (initialized) return kSuccess;  // as CUDA: what a process lists is fixed at its first cuInit
  if (Mode("init-fails")) return kNoDevice;
  if (Mode("hang")) {
    // Forever, counting in C:\fake-nvcuda-heartbeat: the test sees the count stop once the
    // process is killed.
    for (unsigned beat = 1;; ++beat) {
      const HANDLE file = CreateFileA("C:\\fake-nvcuda-heartbeat", GENERIC_WRITE, FILE_SHARE_READ,
                                      nullptr, CREATE_ALWAYS, 0, nullptr);
      if (file != INVALID_HANDLE_VALUE) {
        char text[16];
        const int n = std::snprintf(text, sizeof text, "%u", beat);
        DWORD written = 0;
        WriteFile(file, text, static_cast<DWORD>(n), &written, nullptr);
        CloseHandle(file);
      }
      Sleep(100);
    }
  }
  if (Mode("crash")) {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  }
  ChooseVisible();
  generation = fake_gpu::Generation();
  initialized = true;
  return kSuccess;
}

__declspec(dllexport) int __stdcall cuDeviceGetCount(int* count) {
  if (!initialized) return kNotInitialized;
  if (!count) return kInvalidValue;
  *count = visible_count;
  return kSuccess;
}

__declspec(dllexport) int __stdcall cuDeviceGet(int* device, int ordinal) {
  if (!device) return kInvalidValue;
  if (const int status = Check(ordinal); status != kSuccess) return status;
  *device = ordinal;
  return kSuccess;
}

__declspec(dllexport) int __stdcall cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (const int status = Check(device); status != kSuccess) return status;
  if (!value || attribute != kAttributeTccDriver) return kInvalidValue;
  *value = Mode("tcc") ? 1 : 0;
  return kSuccess;
}

#ifndef FAKE_NVCUDA_NO_LUID
__declspec(dllexport) int __stdcall cuDeviceGetLuid(char* luid, unsigned int* node_mask,
                                                    int device) {
  if (const int status = Check(device); status != kSuccess) return status;
  if (!luid || !node_mask) return kInvalidValue;
  if (device == 0 && Mode("luid-fails")) return kNotSupported;
  const int source = device == 1 && Mode("same-luid") ? visible[0] : visible[device];
  LUID value = fake_gpu::Renumbered(kDevices[source].luid, generation);
  if (device == 0 && Mode("zero-luid")) value = LUID{0, 0};
  std::memcpy(luid, &value, sizeof(LUID));
  *node_mask = 1;
  return kSuccess;
}
#endif

#ifdef FAKE_NVCUDA_V1_UUID
__declspec(dllexport) int __stdcall cuDeviceGetUuid(unsigned char* uuid, int device) {
  return Uuid(uuid, device);
}
#else
__declspec(dllexport) int __stdcall cuDeviceGetUuid_v2(unsigned char* uuid, int device) {
  return Uuid(uuid, device);
}
#endif

}  // extern "C"
