// libFuzzer target: CopyToVm* registry values (REG_MULTI_SZ data as the Windows reader converts
// it). Any input either is refused with std::invalid_argument or yields a runtime file whose
// source and destination pass the path-safety checks.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "devices/runtime_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto strings = dxshim::devices::SplitMultiSz(bytes);
  for (const auto& s : strings) {
    if (s.empty() || s.find('\0') != std::string::npos) std::abort();
  }
  dxshim::devices::RuntimeFile file;
  try {
    file = dxshim::devices::ParseCopyToVmValue(strings);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (dxshim::devices::UnsafeSourceReason(file.source) ||
      dxshim::devices::UnsafeDestinationReason(file.destination)) {
    std::abort();
  }
  return 0;
}
