#include "shim/proxy/status_code_name.h"

#include <absl/status/status.h>

namespace dxshim {

std::string StatusCodeName(grpc::StatusCode code) {
  // gRPC's codes are absl's canonical codes, value for value; absl names any other value "".
  auto name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
}

}  // namespace dxshim
