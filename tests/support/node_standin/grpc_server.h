// The server side of gRPC unary calls over one HTTP/2 connection: each request stream answered,
// in the order its request completes, by a handler.
#pragma once

#include <functional>
#include <string>

#include "tests/support/node_standin/byte_stream.h"
#include "tests/support/node_standin/grpc_call.h"

namespace dxshim::test::node_standin {

using GrpcHandler = std::function<GrpcResponse(const GrpcRequest&)>;

// Serves STREAM until the client closes it (true) or breaks the protocol (false, ERROR says
// how). Answers (grpc/grpc doc/PROTOCOL-HTTP2.md "Responses"): an OK status as Response-Headers
// (:status 200, content-type application/grpc), the message in DATA, then Trailers (grpc-status
// 0) with END_STREAM; any other status as Trailers-Only. A request whose content-type is not
// application/grpc gets HTTP status 415, as the document says servers SHOULD.
bool ServeGrpc(ByteStream& stream, const GrpcHandler& handler, std::string& error);

}  // namespace dxshim::test::node_standin
