// libFuzzer target: inventory files. Any input either fails with InventoryError or yields devices
// that survive a write/read round trip unchanged, in YAML and in JSON.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "devices/inventory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<dxshim::devices::Device> devices;
  try {
    devices = dxshim::devices::ParseInventory(text, "fuzz");
  } catch (const dxshim::devices::InventoryError&) {
    return 0;
  }
  if (dxshim::devices::ParseInventory(dxshim::devices::WriteInventoryYaml(devices), "yaml") !=
      devices) {
    std::abort();
  }
  if (dxshim::devices::ParseInventory(dxshim::devices::WriteInventoryJson(devices), "json") !=
      devices) {
    std::abort();
  }
  return 0;
}
