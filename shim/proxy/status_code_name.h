// The canonical name of a gRPC status code ("RESOURCE_EXHAUSTED"), as grpc-go and kubelet's
// logs spell it: absl's names (absl::StatusCodeToString, linked with gRPC), for the metrics'
// `code` label and every message or log line that names a code.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

namespace dxshim {

// "OK" .. "UNAUTHENTICATED" for codes 0..16; "UNKNOWN" for any other value, as gRPC treats it.
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace dxshim
