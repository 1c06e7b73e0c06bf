// The device model: one record per physical GPU adapter, as discovery finds it or an inventory
// file describes it. Everything dxshim injects into a container comes from these records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::devices {

// A driver runtime file a container needs: `source` relative to the adapter's DriverStore folder,
// `destination` the file name it gets in C:\Windows\System32 or C:\Windows\SysWOW64.
struct RuntimeFile {
  std::string source;
  std::string destination;
  bool operator==(const RuntimeFile&) const = default;
};

enum class DeviceClass {
  kDisplay,  // full D3D12 / WDDM display adapter
  kCompute,  // D3D12 Core compute-only (MCDM)
};

struct Device {
  std::string id;  // PnP device instance id (Windows) or PCI address (Linux)
  std::uint64_t luid = 0;
  std::string location_path;  // first DEVPKEY_Device_LocationPaths entry, or a device node
  std::string description;
  std::string vendor;  // vendor name, e.g. "NVIDIA"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint32_t subsystem_id = 0;
  std::uint8_t revision = 0;
  DeviceClass device_class = DeviceClass::kDisplay;
  bool integrated = false;
  bool detachable = false;
  std::uint64_t dedicated_memory = 0;  // bytes
  std::string driver_version;
  // NVML's "GPU-<uuid>" for an NVIDIA GPU (nvmlDeviceGetUUID), "" when unknown.
  std::string uuid;
  // How discovery found `uuid` ("cuda-luid", "nvml-pci") or why it found none ("none: ..."), for
  // the device table and the explanation; "" when discovery did not look (an inventory's GPU).
  std::string uuid_found_by;
  std::string driver_store;  // DriverStore folder on the host
  std::string driver_key;    // relative to HKLM\SYSTEM\CurrentControlSet\Control\Class
  std::vector<RuntimeFile> system32;
  std::vector<RuntimeFile> syswow64;
  bool present = true;

  bool operator==(const Device&) const = default;
};

const char* ToString(DeviceClass c);

// The PnP hardware id of an adapter, e.g. "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1".
std::string HardwareId(const Device& d);

// A LUID the one way dxshim writes it wherever a person or a query reads it (environment, logs,
// tables, inventories, metrics): as Windows' GPU performance counter instance names write it, and
// so as windows_exporter's `gpu` collector labels its series, "0x%08X_0x%08X" (high part, low
// part; upper-case hex digits, lower-case 0x), e.g. "0x00000000_0x0000D1A7"
// (prometheus-community/windows_exporter internal/collector/gpu/gpu.go:272, commit
// 589ec15d12b25894f425d72d7a2396c9344b00a0).
std::string FormatLuid(std::uint64_t luid);

// The form, with an example, that ParseLuid's errors name.
inline constexpr char kLuidForm[] = "0xHHHHHHHH_0xLLLLLLLL, e.g. 0x00000000_0x0000D1A2";

// Reads a LUID wherever dxshim is given one: as FormatLuid writes it (0xHHHHHHHH_0xLLLLLLLL), as
// dxshim wrote it before (0xHHHHHHHH:0xLLLLLLLL), or as one number (0xd1a7, up to 16 digits);
// hex digits in either case, 1 to 8 per part. Throws std::invalid_argument saying what is wrong:
// "'0x1_d1a7' is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. ...): the low part has no 0x".
std::uint64_t ParseLuid(std::string_view text);

// "NVIDIA", "AMD", "Intel", ... for a PCI vendor id; "" when unknown.
std::string VendorName(std::uint16_t vendor_id);

inline constexpr std::uint16_t kNvidiaVendorId = 0x10de;

// Whether `text` has the form of an NVML GPU UUID: "GPU-" and 8-4-4-4-12 lower-case hex digits.
bool IsNvmlGpuUuid(std::string_view text);

// "0x" and `digits` lower-case hex digits, the way inventories write ids.
std::string HexNumber(std::uint64_t value, int digits);

}  // namespace dxshim::devices
