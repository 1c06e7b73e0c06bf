// A stand-in nvml.dll for the wine test of dxshim-devices.exe
// (tests/devices/windows/devices_exe_test.sh). Wine has no NVIDIA driver and this machine no GPU,
// so the test installs this DLL into the Wine prefix's System32 and dxshim-devices.exe loads it the
// way it loads the real NVML. It knows five GPUs by PCI address, two of them on segments 1 and 2 at
// 0:0.0 as on a cloud VM, and parses the address as NVML documents it (hex "bus:device.function",
// segment 0, or "domain:bus:device.function"). With DXSHIM_FAKE_NVML=init-fails, nvmlInit_v2 fails
// as NVML does without a loaded driver (NVML_ERROR_DRIVER_NOT_LOADED). nvmlDeviceGetCount_v2
// counts all five. Each load is logged (fake_gpu::LogLoad). It proves the loading, matching and
// error paths; it cannot prove the real nvml.dll's ABI (only a Windows node can).
#include <windows.h>

#include <cstdio>
#include <cstring>

#include "tests/devices/windows/fake_gpu_generation.h"

namespace {

struct FakeGpu {
  unsigned domain, bus, device, function;
  const char* uuid;
};

// The last two are the stand-in nvcuda.dll's GPUs and the stand-in cfgmgr32.dll's nodes (the T4
// on segment 1, the A10 on segment 2).
// The first is what NVML answers for "0:0.0" asked without a segment (segment 0's), which is
// neither of the stand-in cfgmgr32.dll's GPUs: the answer a segment-less lookup must not take.
constexpr FakeGpu kGpus[] = {
    {0, 0, 0, 0, "GPU-0e0e0e0e-0000-4000-8000-00000000000e"},
    {0, 0x3b, 0, 0, "GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"},
    {0, 0x86, 0, 0, "GPU-1a2b3c4d-6e7f-4a8b-9c0d-e1f2a3b4c5d6"},
    {1, 0, 0, 0, "GPU-7d1ac1e5-9d4b-4c2a-8f3e-c0ffee000001"},
    {2, 0, 0, 0, "GPU-a10a10a1-0b2c-4d3e-9f40-c0ffee000002"},
};

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kInsufficientSize = 7;
constexpr int kNotFound = 6;
constexpr int kDriverNotLoaded = 9;

int initialized = 0;

bool InitFails() {
  char value[32] = {};
  const DWORD n = GetEnvironmentVariableA("DXSHIM_FAKE_NVML", value, sizeof value);
  return n > 0 && n < sizeof value && std::strcmp(value, "init-fails") == 0;
}

}  // namespace

extern "C" {

BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID) {
  if (reason == DLL_PROCESS_ATTACH) fake_gpu::LogLoad("nvml.dll");
  return TRUE;
}

__declspec(dllexport) int nvmlDeviceGetCount_v2(unsigned* count) {
  if (initialized == 0) return kUninitialized;
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned>(sizeof kGpus / sizeof kGpus[0]);
  return kSuccess;
}

__declspec(dllexport) int nvmlInit_v2() {
  if (InitFails()) return kDriverNotLoaded;
  ++initialized;
  return kSuccess;
}

__declspec(dllexport) int nvmlShutdown() {
  if (initialized == 0) return kUninitialized;
  --initialized;
  return kSuccess;
}

__declspec(dllexport) int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (initialized == 0) return kUninitialized;
  if (!bus_id || !device) return kInvalidArgument;
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  char end = 0;
  if (std::sscanf(bus_id, "%x:%x:%x.%x%c", &domain, &bus, &dev, &function, &end) != 4) {
    domain = 0;  // "bus:device.function" is segment 0's
    if (std::sscanf(bus_id, "%x:%x.%x%c", &bus, &dev, &function, &end) != 3) {
      return kInvalidArgument;
    }
  }
  for (const auto& gpu : kGpus) {
    if (gpu.domain == domain && gpu.bus == bus && gpu.device == dev && gpu.function == function) {
      *device = const_cast<FakeGpu*>(&gpu);
      return kSuccess;
    }
  }
  return kNotFound;
}

__declspec(dllexport) int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  if (initialized == 0) return kUninitialized;
  if (!device || !uuid) return kInvalidArgument;
  const char* text = static_cast<const FakeGpu*>(device)->uuid;
  if (std::strlen(text) + 1 > length) return kInsufficientSize;
  std::memcpy(uuid, text, std::strlen(text) + 1);
  return kSuccess;
}

}  // extern "C"
