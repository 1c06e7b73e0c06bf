// The client side of gRPC unary calls over one HTTP/2 connection, one call at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tests/support/node_standin/byte_stream.h"
#include "tests/support/node_standin/grpc_call.h"
#include "tests/support/node_standin/http2_connection.h"

namespace dxshim::test::node_standin {

class GrpcClient {
 public:
  // AUTHORITY: the :authority of every call (kubelet's CRI client sets "localhost").
  GrpcClient(ByteStream& stream, std::string authority)
      : connection_(stream, http2::Connection::Side::kClient), authority_(std::move(authority)) {}

  // The connection preface; false with ERROR when it cannot be written.
  bool Start(std::string& error) { return connection_.Start(error); }

  // One unary call (grpc/grpc doc/PROTOCOL-HTTP2.md "Requests"): :method POST, :scheme http,
  // :path PATH, :authority, content-type application/grpc, te trailers, then METADATA; the
  // request as one Length-Prefixed-Message with END_STREAM. True with REPLY once the call ended
  // with a status: the trailers' grpc-status and grpc-message, or one synthesized from an HTTP
  // status or a reset (the document's RST_STREAM mapping); false with ERROR when the connection
  // failed first (it is then unusable, as after a GOAWAY that leaves the call out).
  bool Call(std::string_view path, const HeaderList& metadata, std::string_view request,
            GrpcResponse& reply, std::string& error);

 private:
  http2::Connection connection_;
  std::string authority_;
  std::uint32_t next_stream_ = 1;  // RFC 9113 §5.1.1: a client's streams are odd, increasing
  bool usable_ = true;
};

}  // namespace dxshim::test::node_standin
