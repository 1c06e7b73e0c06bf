// A stand-in cfgmgr32.dll for the wine test of dxshim-devices.exe
// (tests/devices/windows/devices_exe_test.sh). Wine's CfgMgr32 has no GPU device nodes and this
// machine no GPU, so the test puts this DLL beside dxshim-devices.exe and tells wine to prefer it
// for that program alone; discovery then reads device nodes for the two NVIDIA adapters of the
// stand-in dxcore.dll (fake_dxcore.cpp) through the same four calls it makes on Windows. The nodes
// are shaped like a cloud VM's: each GPU alone on a PCI segment of its own at bus 0, device 0,
// function 0. With DXSHIM_FAKE_CFGMGR32=no-segment their LocationInfo is what Hyper-V's virtual PCI
// bus writes
// ("Virtual PCI Bus Slot N Serial N"), which names no segment. It proves discovery's PnP step
// and the UUID matching run on these facts; it cannot prove the real CfgMgr32 (only a Windows
// node can). The LUIDs follow the stand-in driver's generation (fake_gpu_generation.h).
#include <windows.h>

#include <cstring>
#include <cwchar>
#include <string>
#include <vector>

#include "tests/devices/windows/fake_gpu_generation.h"

namespace {

// CfgMgr32's ABI, as cfgmgr32.h and devpropdef.h declare it (not included: they declare these
// functions as imported).
using ConfigRet = DWORD;
constexpr ConfigRet kSuccess = 0x00;
constexpr ConfigRet kInvalidPointer = 0x03;
constexpr ConfigRet kNoSuchDevnode = 0x0D;
constexpr ConfigRet kBufferSmall = 0x1A;
constexpr ConfigRet kNoSuchValue = 0x25;
constexpr ULONG kTypeUint32 = 0x07;
constexpr ULONG kTypeUint64 = 0x09;
constexpr ULONG kTypeString = 0x12;
constexpr ULONG kTypeStringList = 0x2012;
struct PropertyKey {
  GUID fmtid;
  ULONG pid;
};
constexpr GUID kDeviceKeys = {
    0xa45c254e, 0xdf1c, 0x4efd, {0x80, 0x20, 0x67, 0xd1, 0x46, 0xa8, 0x50, 0xe0}};
constexpr GUID kGpuLuidKey = {
    0x60b193cb, 0x5276, 0x4d0f, {0x96, 0xfc, 0xf1, 0x73, 0xab, 0xad, 0x3e, 0xc6}};
enum Pid : ULONG {
  kDeviceDesc = 2,
  kDriver = 11,
  kManufacturer = 13,
  kLocationInfo = 15,
  kBusNumber = 23,
  kAddress = 30,
  kLocationPaths = 37,
};

struct Node {
  const wchar_t* instance_id;
  LUID luid;  // the stand-in dxcore.dll's adapters
  const wchar_t* location_path;
  const wchar_t* description;
  const wchar_t* location_info;             // with DXSHIM_FAKE_CFGMGR32 unset
  const wchar_t* location_info_no_segment;  // with DXSHIM_FAKE_CFGMGR32=no-segment
};

constexpr Node kNodes[] = {
    {L"PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\6&1A2B3C4D&0&0",
     {0x0000d1a7, 0},
     L"PCIROOT(0)#PCI(0100)#PCI(0000)",
     L"NVIDIA Tesla T4",
     L"PCI segment 1 bus 0, device 0, function 0",
     L"Virtual PCI Bus Slot 1 Serial 1"},
    {L"PCI\\VEN_10DE&DEV_2236&SUBSYS_148210DE&REV_A1\\6&5E6F7A8B&0&0",
     {0x0000d1b8, 0},
     L"PCIROOT(0)#PCI(0200)#PCI(0000)",
     L"NVIDIA A10",
     L"PCI segment 2 bus 0, device 0, function 0",
     L"Virtual PCI Bus Slot 2 Serial 2"},
};
// The driver key the test fills with a T4 driver's CopyToVm* values.
constexpr wchar_t kDriverKey[] = L"{4d36e968-e325-11ce-bfc1-08002be10318}\\0001";

bool NoSegment() {
  char value[32] = {};
  const DWORD n = GetEnvironmentVariableA("DXSHIM_FAKE_CFGMGR32", value, sizeof value);
  return n > 0 && n < sizeof value && std::strcmp(value, "no-segment") == 0;
}

// DEVINST values are 1-based indexes into kNodes.
const Node* NodeOf(DWORD devinst) {
  return devinst >= 1 && devinst <= sizeof kNodes / sizeof kNodes[0] ? &kNodes[devinst - 1]
                                                                     : nullptr;
}

std::vector<BYTE> Bytes(const void* data, std::size_t size) {
  const auto* p = static_cast<const BYTE*>(data);
  return {p, p + size};
}

std::vector<BYTE> String(const wchar_t* text) {
  return Bytes(text, (std::wcslen(text) + 1) * sizeof(wchar_t));
}

// The property's type and bytes, or false when the node does not have it.
bool Property(const Node& node, const PropertyKey& key, ULONG& type, std::vector<BYTE>& data) {
  if (IsEqualGUID(key.fmtid, kGpuLuidKey) && key.pid == 2) {
    type = kTypeUint64;
    const LUID luid = fake_gpu::Renumbered(node.luid, fake_gpu::Generation());
    data = Bytes(&luid, sizeof luid);
    return true;
  }
  if (!IsEqualGUID(key.fmtid, kDeviceKeys)) return false;
  const DWORD zero = 0;
  switch (key.pid) {
    case kDeviceDesc:
      type = kTypeString;
      data = String(node.description);
      return true;
    case kDriver:
      type = kTypeString;
      data = String(kDriverKey);
      return true;
    case kManufacturer:
      type = kTypeString;
      data = String(L"NVIDIA");
      return true;
    case kLocationInfo:
      type = kTypeString;
      data = String(NoSegment() ? node.location_info_no_segment : node.location_info);
      return true;
    case kBusNumber:
    case kAddress:
      type = kTypeUint32;
      data = Bytes(&zero, sizeof zero);  // bus 0; device 0, function 0
      return true;
    case kLocationPaths: {
      type = kTypeStringList;
      data = String(node.location_path);
      data.push_back(0);  // the list's final NUL
      data.push_back(0);
      return true;
    }
    default:
      return false;
  }
}

std::wstring IdList() {
  std::wstring list;
  for (const auto& node : kNodes) list.append(node.instance_id).push_back(L'\0');
  list.push_back(L'\0');
  return list;
}

}  // namespace

extern "C" {

__declspec(dllexport) ConfigRet WINAPI
    CM_Get_Device_ID_List_SizeW(ULONG* length, const wchar_t*, ULONG) {
  if (!length) return kInvalidPointer;
  *length = static_cast<ULONG>(IdList().size());
  return kSuccess;
}

__declspec(dllexport) ConfigRet WINAPI
    CM_Get_Device_ID_ListW(const wchar_t*, wchar_t* buffer, ULONG length, ULONG) {
  const auto list = IdList();
  if (!buffer) return kInvalidPointer;
  if (length < list.size()) return kBufferSmall;
  std::memcpy(buffer, list.data(), list.size() * sizeof(wchar_t));
  return kSuccess;
}

__declspec(dllexport) ConfigRet WINAPI
    CM_Locate_DevNodeW(DWORD* devinst, const wchar_t* id, ULONG) {
  if (!devinst || !id) return kInvalidPointer;
  for (DWORD i = 0; i < sizeof kNodes / sizeof kNodes[0]; ++i) {
    if (std::wcscmp(kNodes[i].instance_id, id) == 0) {
      *devinst = i + 1;
      return kSuccess;
    }
  }
  return kNoSuchDevnode;
}

__declspec(dllexport) ConfigRet WINAPI
    CM_Get_DevNode_PropertyW(DWORD devinst, const PropertyKey* key, ULONG* type, BYTE* buffer,
                             ULONG* size, ULONG) {
  const Node* node = NodeOf(devinst);
  if (!node) return kNoSuchDevnode;
  if (!key || !type || !size) return kInvalidPointer;
  std::vector<BYTE> data;
  if (!Property(*node, *key, *type, data)) return kNoSuchValue;
  if (!buffer || *size < data.size()) {
    *size = static_cast<ULONG>(data.size());
    return kBufferSmall;
  }
  std::memcpy(buffer, data.data(), data.size());
  *size = static_cast<ULONG>(data.size());
  return kSuccess;
}

}  // extern "C"
