// Windows only: a display driver's runtime files, read from the CopyToVm* subkeys of its driver
// key (HKLM\SYSTEM\CurrentControlSet\Control\Class\<driver key>). No gRPC here, so this builds
// with mingw and its tests run under wine.
#pragma once

#include <string>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices::windows {

struct RegistryRuntimeFiles {
  std::vector<RuntimeFile> system32;  // CopyToVmOverwrite, CopyToVmWhenNewer
  std::vector<RuntimeFile> syswow64;  // CopyToVmOverwriteWow64, CopyToVmWhenNewerWow64
  // Values that were refused (wrong type, unsafe path, ...), each naming subkey, value and why.
  // Registry data is untrusted: a bad value is skipped, never used.
  std::vector<std::string> refused;
};

// `driver_key` as DEVPKEY_Device_Driver gives it, e.g.
// "{4d36e968-e325-11ce-bfc1-08002be10318}\0001". A missing subkey means no files from it.
// Throws std::runtime_error if the driver key itself cannot be opened.
RegistryRuntimeFiles ReadRegistryRuntimeFiles(const std::string& driver_key);

}  // namespace dxshim::devices::windows
