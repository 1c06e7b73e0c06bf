// How Windows discovery turns what DXCore, the PnP manager and the kernel graphics driver say
// about one adapter into a Device. Portable (no Windows headers) so it is unit-tested on Linux
// with captured values; the Windows calls that gather the facts live in devices/windows/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.h"
#include "devices/gpu_uuids.h"

namespace dxshim::devices {

// What DXCore reports for one adapter (IDXCoreAdapter properties and attributes).
struct DxCoreFacts {
  std::uint64_t luid = 0;  // InstanceLuid: HighPart << 32 | LowPart
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint32_t subsystem_id = 0;
  std::uint32_t revision = 0;
  std::string description;           // DriverDescription
  std::uint64_t driver_version = 0;  // DriverVersion: four 16-bit parts, most significant first
  std::uint64_t dedicated_memory = 0;
  bool hardware = true;
  bool integrated = false;
  bool detachable = false;
  bool d3d12_graphics = false;      // DXCORE_ADAPTER_ATTRIBUTE_D3D12_GRAPHICS
  bool d3d12_core_compute = false;  // DXCORE_ADAPTER_ATTRIBUTE_D3D12_CORE_COMPUTE
};

// What the PnP device whose GPU LUID property matches the adapter says.
struct PnpFacts {
  std::string instance_id;                  // e.g. PCI\VEN_10DE&DEV_1EB8&...\3&2411E6FE&1&F0
  std::vector<std::string> location_paths;  // DEVPKEY_Device_LocationPaths
  std::string driver_key;                   // DEVPKEY_Device_Driver
  std::string description;                  // DEVPKEY_Device_DeviceDesc
  std::string manufacturer;                 // DEVPKEY_Device_Manufacturer
  std::optional<std::uint32_t> bus_number;  // DEVPKEY_Device_BusNumber
  std::optional<std::uint32_t> address;  // DEVPKEY_Device_Address: on PCI, device << 16 | function
  std::string location_info;             // DEVPKEY_Device_LocationInfo
  // Set when a property that names the device (instance id, location paths, driver key) holds
  // UTF-16 with no UTF-8 form: "DEVPKEY_Device_Driver '...' holds an unpaired UTF-16 surrogate
  // ...". MakeWindowsDevice refuses the adapter with it.
  std::string unreadable;
};

// The PCI address in DEVPKEY_Device_LocationInfo as the PCI bus driver writes it (decimal):
// "PCI segment 1 bus 0, device 0, function 0" on a system with several PCI segments, "PCI bus 59,
// device 0, function 0" (segment 0) on one with a single segment; Microsoft's "Obtaining PCI
// Segment Values" (learn.microsoft.com/windows-hardware/drivers/pci/obtaining-pci-segment-values)
// names this string as where the segment is. nullopt for any other text: a Hyper-V vPCI device's
// "Virtual PCI Bus Slot 2 Serial 2", or a translated string.
std::optional<PciLocation> ParsePciLocationInfo(std::string_view text);

// The adapter's PCI address: from its LocationInfo when that parses (with the segment), else
// from DEVPKEY_Device_BusNumber and DEVPKEY_Device_Address with the segment unknown; nullopt when
// the PnP device says neither. Of the bus number only the low 8 bits are the bus: pciutils and
// DPDK read a segment from the bits above, which Microsoft does not document, so they are not
// taken for one.
std::optional<PciLocation> PciLocationOf(const PnpFacts& pnp);

// Why DXCore's adapter is not a GPU dxshim hands out, or nullopt if it is: software adapters
// (the Basic Render Driver, WARP) and adapters with neither D3D12 attribute.
std::optional<std::string> SkipReason(const DxCoreFacts& adapter);

// "31.0.15.3742" from DXCore's DriverVersion.
std::string FormatDriverVersion(std::uint64_t version);

// The DriverStore path D3DKMT reports starts with "\SystemRoot" (the kernel's name for the Windows
// directory); returns it with that prefix replaced by `windows_dir`, other paths unchanged.
std::string ExpandSystemRoot(std::string_view path, std::string_view windows_dir);

// True when the DriverStore path is the one a process inside a container sees
// (...\System32\HostDriverStore\...): discovery is then running in a container, and the paths
// are not the host's.
bool IsContainerDriverStore(std::string_view path);

// The Device for one adapter. The PnP location path's first entry becomes location_path (a
// PCIe path such as "PCIROOT(0)#PCI(1B00)"; ACPI-only paths are skipped because containerd's
// vpci-location-path needs the PCI one). Throws std::invalid_argument naming the adapter when
// a required fact (a location path) is missing or a PnP property could not be read
// (PnpFacts::unreadable).
Device MakeWindowsDevice(const DxCoreFacts& adapter, const PnpFacts& pnp,
                         const std::string& driver_store, std::vector<RuntimeFile> system32,
                         std::vector<RuntimeFile> syswow64);

}  // namespace dxshim::devices
