// The JSON inventory writer, kept apart from the YAML code so that dxshim-devices.exe (built
// with mingw, which has no yaml-cpp here) can write inventories too.
#include <sstream>

#include "devices/inventory_file.h"
#include "shim/base/json_text.h"

namespace dxshim::devices {

std::string WriteInventoryJson(const std::vector<Device>& devices) {
  std::ostringstream out;
  out << "{\"devices\": [";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    out << (i ? ",\n  " : "\n  ") << "{\"id\": " << JsonString(d.id)
        << ", \"luid\": " << JsonString(FormatLuid(d.luid))
        << ", \"locationPath\": " << JsonString(d.location_path)
        << ", \"description\": " << JsonString(d.description)
        << ", \"vendor\": " << JsonString(d.vendor)
        << ", \"vendorId\": " << JsonString(HexNumber(d.vendor_id, 4))
        << ", \"deviceId\": " << JsonString(HexNumber(d.device_id, 4))
        << ", \"subsystemId\": " << JsonString(HexNumber(d.subsystem_id, 8))
        << ", \"revision\": " << JsonString(HexNumber(d.revision, 2))
        << ", \"class\": " << JsonString(ToString(d.device_class))
        << ", \"integrated\": " << (d.integrated ? "true" : "false")
        << ", \"detachable\": " << (d.detachable ? "true" : "false")
        << ", \"dedicatedMemory\": " << d.dedicated_memory
        << ", \"driverVersion\": " << JsonString(d.driver_version)
        << (d.uuid.empty() ? "" : ", \"uuid\": " + JsonString(d.uuid))
        << ", \"driverStore\": " << JsonString(d.driver_store)
        << ", \"driverKey\": " << JsonString(d.driver_key)
        << ", \"present\": " << (d.present ? "true" : "false") << ", \"runtimeFiles\": {";
    const std::pair<const char*, const std::vector<RuntimeFile>*> lists[] = {
        {"system32", &d.system32}, {"syswow64", &d.syswow64}};
    for (std::size_t l = 0; l < 2; ++l) {
      out << (l ? ", " : "") << "\"" << lists[l].first << "\": [";
      const auto& files = *lists[l].second;
      for (std::size_t f = 0; f < files.size(); ++f) {
        out << (f ? ", " : "") << "{\"source\": " << JsonString(files[f].source)
            << ", \"destination\": " << JsonString(files[f].destination) << "}";
      }
      out << "]";
    }
    out << "}}";
  }
  out << "\n]}\n";
  return out.str();
}

}  // namespace dxshim::devices
