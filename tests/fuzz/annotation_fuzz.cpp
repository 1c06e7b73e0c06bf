// libFuzzer target: pod annotations. The input is "key=value" lines; keys get the dxshim.io/
// prefix when they have none. Any input is either refused with RequestError or yields a request
// within the grammar's bounds whose required files are plain file names.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "devices/allocation/device_request.h"
#include "devices/runtime_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::map<std::string, std::string> annotations;
  std::stringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    auto key = line.substr(0, eq);
    if (!key.starts_with("dxshim.io/")) key = "dxshim.io/" + key;
    annotations[key] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  std::optional<dxshim::devices::DeviceRequest> request;
  try {
    request = dxshim::devices::ParseDeviceRequest(annotations);
  } catch (const dxshim::devices::RequestError&) {
    return 0;
  }
  if (!request) {
    if (!annotations.empty()) std::abort();  // every key carries the prefix
    return 0;
  }
  if (request->count < 1 || request->count > 16) std::abort();
  if (!request->pins.empty() && request->count > request->pins.size()) std::abort();
  for (const auto& file : request->required_files) {
    if (dxshim::devices::UnsafeDestinationReason(file)) std::abort();
  }
  for (const auto& pin : request->pins) {
    if (pin.empty()) std::abort();
  }
  (void)dxshim::devices::Describe(*request);
  return 0;
}
