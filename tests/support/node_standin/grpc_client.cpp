// gRPC unary calls over one HTTP/2 connection (grpc/grpc doc/PROTOCOL-HTTP2.md).
#include "tests/support/node_standin/grpc_client.h"

#include <cstdlib>

namespace dxshim::test::node_standin {

namespace {

using http2::StreamEvent;

// PROTOCOL-HTTP2.md leaves a missing status to be synthesized; gRPC's libraries map HTTP statuses
// (grpc/grpc doc/http-grpc-status-mapping.md) so.
int StatusOfHttp(const std::string& status) {
  if (status == "400") return kGrpcInternal;
  if (status == "401") return 16;  // UNAUTHENTICATED
  if (status == "403") return kGrpcPermissionDenied;
  if (status == "404") return kGrpcUnimplemented;
  if (status == "429" || status == "502" || status == "503" || status == "504")
    return kGrpcUnavailable;
  return kGrpcUnknown;
}

// PROTOCOL-HTTP2.md "Errors": RST_STREAM's codes as gRPC statuses.
int StatusOfReset(std::uint32_t code) {
  if (code == http2::kRefusedStream) return kGrpcUnavailable;
  if (code == http2::kCancel) return kGrpcCancelled;
  return kGrpcInternal;
}

}  // namespace

bool GrpcClient::Call(std::string_view path, const HeaderList& metadata, std::string_view request,
                      GrpcResponse& reply, std::string& error) {
  if (!usable_) {
    error = "the connection is no longer usable";
    return false;
  }
  const std::uint32_t stream = next_stream_;
  next_stream_ += 2;
  HeaderList headers = {{":method", "POST"},
                        {":scheme", "http"},
                        {":path", std::string(path)},
                        {":authority", authority_},
                        {"content-type", "application/grpc"},
                        {"te", "trailers"},
                        {"user-agent", "dxshim-node-standin"}};
  headers.insert(headers.end(), metadata.begin(), metadata.end());
  usable_ = connection_.SendHeaders(stream, headers, false, error) &&
            connection_.SendData(stream, LengthPrefixed(request), true, error);
  if (!usable_) return false;

  reply = GrpcResponse{};
  bool have_headers = false;
  std::string http_status;
  std::string body;
  for (;;) {
    StreamEvent event;
    if (!connection_.Next(event, error)) {
      usable_ = false;
      return false;
    }
    if (event.kind == StreamEvent::kGotGoAway) {
      // PROTOCOL-HTTP2.md "GOAWAY Frame": streams after the last one are not processed; the
      // connection takes no new calls either way.
      usable_ = false;
      if (event.last_stream < stream) {
        reply.status = kGrpcUnavailable;
        reply.status_message = "the server sent GOAWAY before this call";
        return true;
      }
      continue;
    }
    if (event.stream != stream) continue;  // an earlier call's late frames
    if (event.kind == StreamEvent::kGotReset) {
      reply.status = StatusOfReset(event.error_code);
      reply.status_message = "stream reset with HTTP/2 error " + std::to_string(event.error_code);
      connection_.Forget(stream);
      return true;
    }
    if (event.kind == StreamEvent::kGotData) {
      body += event.data;
    } else if (!have_headers) {  // Response-Headers, or Trailers-Only
      have_headers = true;
      const std::string* status = FindHeader(event.headers, ":status");
      http_status = status ? *status : "";
    }
    if (!event.end_stream) continue;
    connection_.Forget(stream);
    const std::string* grpc_status =
        event.kind == StreamEvent::kGotHeaders ? FindHeader(event.headers, "grpc-status") : nullptr;
    if (http_status != "200") {
      reply.status = StatusOfHttp(http_status);
      reply.status_message = "HTTP status " + http_status;
    } else if (!grpc_status) {
      reply.status = kGrpcUnknown;
      reply.status_message = "the call ended without grpc-status";
    } else {
      reply.status = std::atoi(grpc_status->c_str());
      if (const std::string* message = FindHeader(event.headers, "grpc-message"))
        reply.status_message = PercentDecode(*message);
    }
    if (reply.status == kGrpcOk) {
      std::string why;
      if (auto message = SingleMessage(body, why)) {
        reply.message = std::move(*message);
      } else {
        reply.status = kGrpcInternal;
        reply.status_message = "the response: " + why;
      }
    }
    return true;
  }
}

}  // namespace dxshim::test::node_standin
