#include "shim/proxy/status_code_name.h"

#include <cstddef>

namespace dxshim {
namespace {

constexpr const char* kNames[] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

}  // namespace

const char* StatusCodeName(grpc::StatusCode code) {
  const auto index = static_cast<std::size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "UNKNOWN";
}

}  // namespace dxshim
