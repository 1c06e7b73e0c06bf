// dxshim-devices.exe: Windows discovery without gRPC, for operators (snapshot a node into an
// inventory) and for the tests that run under wine.
//   dxshim-devices.exe list [--output table|json] [--include-integrated] [--include-detachable]
//     the node's GPUs (DXCore + CfgMgr32 + D3DKMT + registry); JSON is an inventory file
//     `dxshim devices --source inventory:PATH` and `dxshim serve` accept.
//   dxshim-devices.exe runtime-files DRIVER_KEY
//     the runtime files a driver registers, one per line as "system32 SOURCE => DESTINATION".
//   dxshim-devices.exe uuids [--discoveries N] [--nvidia-deadline SECONDS]
//     each NVIDIA GPU's UUID as `list` finds it (CUDA by adapter LUID, else NVML by PCI address,
//     each asked in a child: `nvidia-uuids` below; DriverStore folders and runtime files are not
//     read), as one line of JSON per discovery:
//       {"gpus": [{"luid": "0x00000000_0x0000D1A7", "location_path": "...", "uuid": "GPU-...",
//                  "found_by": "cuda-luid"}, ...]}
//     found_by is cuda-luid, nvml-pci, or "none: <why>" with an empty uuid. With --discoveries N
//     (0: forever) it discovers again each time the adapters change, as serve does, until N
//     discoveries were printed. --nvidia-deadline: how long each child may take (default 30).
//   dxshim-devices.exe nvidia-uuids cuda | nvidia-uuids nvml BUSID...
//     the child discovery runs: what nvcuda.dll or nvml.dll said, as JSON
//     (devices/nvidia_answers.h).
// Warnings, debug lines ("debug: ...") and refused registry values go to stderr. Exit 1 when
// discovery fails, 2 on bad usage.
#include <windows.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "devices/windows/nvidia_query.h"
#include "devices/windows/registry_runtime_files.h"
#include "devices/windows/windows_device_source.h"
#include "devices/windows/windows_discovery.h"
#include "shim/base/json_text.h"

namespace {

constexpr char kUsage[] =
    "usage: dxshim-devices.exe list [--output table|json] [--include-integrated] "
    "[--include-detachable]\n"
    "       dxshim-devices.exe runtime-files DRIVER_KEY\n"
    "       dxshim-devices.exe uuids [--discoveries N] [--nvidia-deadline SECONDS]\n";

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

std::string UuidLine(const std::vector<dxshim::devices::Device>& devices) {
  using dxshim::JsonString;
  std::string line = "{\"gpus\": [";
  bool first = true;
  for (const auto& device : devices) {
    if (device.vendor_id != dxshim::devices::kNvidiaVendorId) continue;
    line += std::string(first ? "" : ", ") +
            "{\"luid\": " + JsonString(dxshim::devices::FormatLuid(device.luid)) +
            ", \"location_path\": " + JsonString(device.location_path) +
            ", \"uuid\": " + JsonString(device.uuid) +
            ", \"found_by\": " + JsonString(device.uuid_found_by) + "}";
    first = false;
  }
  return line + "]}\n";
}

bool Count(const std::string& text, unsigned long& out) {
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  out = std::stoul(text);
  return true;
}

int Uuids(const std::vector<std::string>& args) {
  unsigned long discoveries = 1;
  unsigned long deadline = 30;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool valued = i + 1 < args.size();
    if (args[i] == "--discoveries" && valued && Count(args[i + 1], discoveries)) {
      ++i;
    } else if (args[i] == "--nvidia-deadline" && valued && Count(args[i + 1], deadline) &&
               deadline > 0) {
      ++i;
    } else {
      std::fprintf(stderr, "dxshim-devices: bad argument '%s'\n%s", args[i].c_str(), kUsage);
      return 2;
    }
  }
  using dxshim::devices::windows::WindowsDiscovery;
  WindowsDiscovery discovery({L"", std::chrono::seconds(deadline)});
  for (unsigned long done = 0; discoveries == 0 || done < discoveries;) {
    if (done > 0 && !discovery.Stale()) {
      Sleep(200);
      continue;
    }
    dxshim::devices::windows::WindowsDiscoveryResult found;
    try {
      found = discovery.Discover(WindowsDiscovery::DriverFiles::kSkipped);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dxshim-devices: discovery failed: %s\n", e.what());
      return 1;
    }
    for (const auto& w : found.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    for (const auto& d : found.debug) std::fprintf(stderr, "debug: %s\n", d.c_str());
    std::fputs(UuidLine(found.devices).c_str(), stdout);
    std::fflush(stdout);
    std::fflush(stderr);
    ++done;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "list") return List({args.begin() + 1, args.end()});
  if (args.size() == 2 && args[0] == "runtime-files") return RuntimeFiles(args[1]);
  if (!args.empty() && args[0] == "uuids") return Uuids({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "nvidia-uuids") {
    return dxshim::devices::windows::RunNvidiaUuidsCommand({args.begin() + 1, args.end()});
  }
  std::fputs(kUsage, stderr);
  return 2;
}
