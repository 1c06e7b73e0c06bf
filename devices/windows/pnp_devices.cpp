#include "devices/windows/pnp_devices.h"

// clang-format off
#include <initguid.h>
#include <windows.h>
#include <cfgmgr32.h>
#include <devpkey.h>
// clang-format on

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/windows/wide_text.h"

namespace dxshim::devices::windows {
namespace {

// Not in the SDK headers: the adapter LUID the graphics kernel publishes on the device node.
const DEVPROPKEY kGpuLuidKey = {
    {0x60b193cb, 0x5276, 0x4d0f, {0x96, 0xfc, 0xf1, 0x73, 0xab, 0xad, 0x3e, 0xc6}}, 2};

// The raw bytes of a property, sized by asking first (no fixed-size buffers); nullopt if the
// node does not have it.
std::optional<std::vector<BYTE>> ReadProperty(DEVINST node, const DEVPROPKEY& key,
                                              DEVPROPTYPE& type) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    ULONG size = 0;
    CONFIGRET cr = CM_Get_DevNode_PropertyW(node, &key, &type, nullptr, &size, 0);
    if (cr != CR_BUFFER_SMALL) return std::nullopt;
    std::vector<BYTE> data(size);
    cr = CM_Get_DevNode_PropertyW(node, &key, &type, data.data(), &size, 0);
    if (cr == CR_SUCCESS) {
      data.resize(size);
      return data;
    }
    if (cr != CR_BUFFER_SMALL) return std::nullopt;  // else it grew in between: ask again
  }
  return std::nullopt;
}

// Throws Utf16Error for text with an unpaired surrogate unless `surrogates` shows them.
std::string StringProperty(DEVINST node, const DEVPROPKEY& key,
                           Surrogates surrogates = Surrogates::kRefuse) {
  DEVPROPTYPE type = 0;
  const auto data = ReadProperty(node, key, type);
  if (!data || type != DEVPROP_TYPE_STRING) return {};
  return Utf8FromWideBytes(data->data(), data->size(), /*stop_at_nul=*/true, surrogates);
}

std::vector<std::string> StringListProperty(DEVINST node, const DEVPROPKEY& key) {
  DEVPROPTYPE type = 0;
  const auto data = ReadProperty(node, key, type);
  if (!data || type != DEVPROP_TYPE_STRING_LIST) return {};
  std::wstring text(data->size() / sizeof(wchar_t), L'\0');
  std::memcpy(text.data(), data->data(), text.size() * sizeof(wchar_t));
  return Utf8FromMultiSz(text.data(), text.size());
}

std::optional<std::uint32_t> Uint32Property(DEVINST node, const DEVPROPKEY& key) {
  DEVPROPTYPE type = 0;
  const auto data = ReadProperty(node, key, type);
  if (!data || type != DEVPROP_TYPE_UINT32 || data->size() != sizeof(std::uint32_t)) {
    return std::nullopt;
  }
  std::uint32_t value = 0;
  std::memcpy(&value, data->data(), sizeof value);
  return value;
}

std::optional<std::uint64_t> LuidProperty(DEVINST node) {
  DEVPROPTYPE type = 0;
  const auto data = ReadProperty(node, kGpuLuidKey, type);
  if (!data || data->size() != sizeof(std::uint64_t)) return std::nullopt;
  LUID luid{};  // stored as a LUID: LowPart, then HighPart
  std::memcpy(&luid, data->data(), sizeof(luid));
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(luid.HighPart)) << 32) |
         luid.LowPart;
}

std::vector<wchar_t> PresentDeviceIds() {
  for (int attempt = 0; attempt < 4; ++attempt) {
    ULONG length = 0;
    CONFIGRET cr = CM_Get_Device_ID_List_SizeW(&length, nullptr, CM_GETIDLIST_FILTER_PRESENT);
    if (cr != CR_SUCCESS) {
      throw std::runtime_error("CM_Get_Device_ID_List_Size failed: CONFIGRET " +
                               std::to_string(cr));
    }
    std::vector<wchar_t> ids(length);
    cr = CM_Get_Device_ID_ListW(nullptr, ids.data(), length, CM_GETIDLIST_FILTER_PRESENT);
    if (cr == CR_SUCCESS) return ids;
    if (cr != CR_BUFFER_SMALL) {
      throw std::runtime_error("CM_Get_Device_ID_List failed: CONFIGRET " + std::to_string(cr));
    }
  }
  throw std::runtime_error("CM_Get_Device_ID_List: the device list kept growing");
}

}  // namespace

std::map<std::uint64_t, PnpFacts> PnpDevicesByLuid() {
  std::map<std::uint64_t, PnpFacts> out;
  const auto ids = PresentDeviceIds();
  for (const wchar_t* id = ids.data(); id < ids.data() + ids.size() && *id;
       id += std::wcslen(id) + 1) {
    DEVINST node = 0;
    if (CM_Locate_DevNodeW(&node, const_cast<wchar_t*>(id), CM_LOCATE_DEVNODE_NORMAL) !=
        CR_SUCCESS) {
      continue;  // left since the list was read
    }
    const auto luid = LuidProperty(node);
    if (!luid) continue;
    PnpFacts facts;
    // What names the device (its id, location path, driver key) must convert exactly, or the
    // GPU is skipped naming the property (MakeWindowsDevice); descriptive text shows a surrogate.
    facts.instance_id = Utf8FromWide(id, Surrogates::kShow);
    const auto exact = [&](const char* property, const auto& read) {
      try {
        read();
      } catch (const Utf16Error& e) {
        if (facts.unreadable.empty()) facts.unreadable = std::string(property) + " " + e.what();
      }
    };
    exact("its instance id", [&] { facts.instance_id = Utf8FromWide(id); });
    exact("DEVPKEY_Device_LocationPaths",
          [&] { facts.location_paths = StringListProperty(node, DEVPKEY_Device_LocationPaths); });
    exact("DEVPKEY_Device_Driver",
          [&] { facts.driver_key = StringProperty(node, DEVPKEY_Device_Driver); });
    facts.description = StringProperty(node, DEVPKEY_Device_DeviceDesc, Surrogates::kShow);
    facts.manufacturer = StringProperty(node, DEVPKEY_Device_Manufacturer, Surrogates::kShow);
    facts.bus_number = Uint32Property(node, DEVPKEY_Device_BusNumber);
    facts.address = Uint32Property(node, DEVPKEY_Device_Address);
    facts.location_info = StringProperty(node, DEVPKEY_Device_LocationInfo, Surrogates::kShow);
    out[*luid] = std::move(facts);
  }
  return out;
}

}  // namespace dxshim::devices::windows
