// The canonical name of a gRPC status code ("RESOURCE_EXHAUSTED"), as grpc-go and kubelet's
// logs spell it: one table for the metrics' `code` label and the messages that name a code.
#pragma once

#include <grpcpp/support/status.h>

namespace dxshim {

// "OK" .. "UNAUTHENTICATED" for codes 0..16; "UNKNOWN" for any other value.
const char* StatusCodeName(grpc::StatusCode code);

}  // namespace dxshim
