// dxshim-devices.exe: Windows discovery without gRPC, for operators (snapshot a node into an
// inventory) and for the tests that run under wine.
//   dxshim-devices.exe list [--output table|json] [--include-integrated] [--include-detachable]
//     the node's GPUs (DXCore + CfgMgr32 + D3DKMT + registry); JSON is an inventory file
//     `dxshim devices --source inventory:PATH` and `dxshim serve` accept.
//   dxshim-devices.exe runtime-files DRIVER_KEY
//     the runtime files a driver registers, one per line as "system32 SOURCE => DESTINATION".
//   dxshim-devices.exe uuids
//     each NVIDIA GPU's UUID as `list` finds it (CUDA by adapter LUID, else NVML by PCI address;
//     DriverStore folders and runtime files are not read),
//     one per line as "LUID LOCATION-PATH UUID FOUND-BY" (FOUND-BY: cuda-luid or nvml-pci), or
//     "LUID LOCATION-PATH - -" when none was found (the debug lines say why).
// Warnings, debug lines ("debug: ...") and refused registry values go to stderr. Exit 1 when
// discovery fails, 2 on bad usage.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "devices/windows/registry_runtime_files.h"
#include "devices/windows/windows_device_source.h"
#include "devices/windows/windows_discovery.h"

namespace {

constexpr char kUsage[] =
    "usage: dxshim-devices.exe list [--output table|json] [--include-integrated] "
    "[--include-detachable]\n"
    "       dxshim-devices.exe runtime-files DRIVER_KEY\n"
    "       dxshim-devices.exe uuids\n";

int List(const std::vector<std::string>& args) {
  std::string output = "table";
  bool integrated = false;
  bool detachable = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--output" && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--include-integrated") {
      integrated = true;
    } else if (args[i] == "--include-detachable") {
      detachable = true;
    } else {
      std::fprintf(stderr, "dxshim-devices: unknown argument '%s'\n%s", args[i].c_str(), kUsage);
      return 2;
    }
  }
  if (output != "table" && output != "json") {
    std::fprintf(stderr, "dxshim-devices: --output '%s' is not table or json\n", output.c_str());
    return 2;
  }
  // The same source the shim's Windows build uses.
  dxshim::devices::windows::WindowsDeviceSource source;
  std::vector<dxshim::devices::Device> found;
  try {
    found = source.Load();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dxshim-devices: discovery failed: %s\n", e.what());
    return 1;
  }
  for (const auto& w : source.Warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& d : source.DebugLines()) std::fprintf(stderr, "debug: %s\n", d.c_str());
  const auto usable = dxshim::devices::SelectUsable(found, integrated, detachable);
  const auto text = output == "json" ? dxshim::devices::WriteInventoryJson(usable)
                                     : dxshim::devices::FormatDeviceTable(usable);
  std::fputs(text.c_str(), stdout);
  return 0;
}

int RuntimeFiles(const std::string& driver_key) {
  try {
    const auto files = dxshim::devices::windows::ReadRegistryRuntimeFiles(driver_key);
    for (const auto& f : files.system32) {
      std::printf("system32 %s => %s\n", f.source.c_str(), f.destination.c_str());
    }
    for (const auto& f : files.syswow64) {
      std::printf("syswow64 %s => %s\n", f.source.c_str(), f.destination.c_str());
    }
    for (const auto& r : files.refused) std::fprintf(stderr, "refused %s\n", r.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dxshim-devices: %s\n", e.what());
    return 1;
  }
  return 0;
}

int Uuids() {
  dxshim::devices::windows::WindowsDiscoveryResult found;
  try {
    using dxshim::devices::windows::WindowsDiscovery;
    found = WindowsDiscovery().Discover(WindowsDiscovery::DriverFiles::kSkipped);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dxshim-devices: discovery failed: %s\n", e.what());
    return 1;
  }
  for (const auto& w : found.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& d : found.debug) std::fprintf(stderr, "debug: %s\n", d.c_str());
  for (const auto& device : found.devices) {
    if (device.vendor_id != dxshim::devices::kNvidiaVendorId) continue;
    const auto by = found.uuid_found_by.find(device.id);
    std::printf("%s %s %s %s\n", dxshim::devices::FormatLuid(device.luid).c_str(),
                device.location_path.c_str(), device.uuid.empty() ? "-" : device.uuid.c_str(),
                by == found.uuid_found_by.end() ? "-" : dxshim::devices::ToString(by->second));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "list") return List({args.begin() + 1, args.end()});
  if (args.size() == 2 && args[0] == "runtime-files") return RuntimeFiles(args[1]);
  if (args.size() == 1 && args[0] == "uuids") return Uuids();
  std::fputs(kUsage, stderr);
  return 2;
}
