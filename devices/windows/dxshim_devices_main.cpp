// dxshim-devices.exe: the Windows discovery pieces without gRPC, for operators and for the tests
// that run under wine.
//   dxshim-devices.exe runtime-files DRIVER_KEY
// prints the runtime files a driver registers (System32 and SysWOW64), one per line as
// "system32 SOURCE => DESTINATION", and each refused registry value on stderr. Exit 1 when the
// driver key cannot be read, 2 on bad usage.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "devices/windows/registry_runtime_files.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "runtime-files") {
    std::fprintf(stderr, "usage: dxshim-devices.exe runtime-files DRIVER_KEY\n");
    return 2;
  }
  try {
    const auto files = dxshim::devices::windows::ReadRegistryRuntimeFiles(argv[2]);
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
