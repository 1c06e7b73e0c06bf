// A gRPC unary call as both sides see it (grpc/grpc doc/PROTOCOL-HTTP2.md @010decebd9): the
// request's path, metadata and message, the answer's status, status message and message, and
// the framing of a Length-Prefixed-Message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/node_standin/hpack.h"

namespace dxshim::test::node_standin {

// gRPC status codes (grpc/grpc doc/statuscodes.md).
enum GrpcCode : int {
  kGrpcOk = 0,
  kGrpcCancelled = 1,
  kGrpcUnknown = 2,
  kGrpcInvalidArgument = 3,
  kGrpcDeadlineExceeded = 4,
  kGrpcNotFound = 5,
  kGrpcAlreadyExists = 6,
  kGrpcPermissionDenied = 7,
  kGrpcResourceExhausted = 8,
  kGrpcFailedPrecondition = 9,
  kGrpcUnimplemented = 12,
  kGrpcInternal = 13,
  kGrpcUnavailable = 14,
};

struct GrpcRequest {
  std::string path;     // /package.Service/Method
  HeaderList metadata;  // every header field, the pseudo-headers too
  std::string message;  // the serialized request
};

struct GrpcResponse {
  int status = kGrpcOk;
  std::string status_message;
  std::string message;  // the serialized response (sent only with status OK)
};

// Length-Prefixed-Message: a compressed flag octet, a 4-octet big-endian length, the message.
std::string LengthPrefixed(std::string_view message);
// The one uncompressed message that BODY holds (an empty BODY: an empty message); nothing when
// BODY is not exactly one such message (WHY says what it is).
std::optional<std::string> SingleMessage(std::string_view body, std::string& why);

// Status-Message's percent-encoding (PROTOCOL-HTTP2.md "Percent-Encoded"): octets outside
// %x20-%x7E and "%" itself as %XX; decoding leaves broken escapes as they are.
std::string PercentEncode(std::string_view text);
std::string PercentDecode(std::string_view text);

}  // namespace dxshim::test::node_standin
