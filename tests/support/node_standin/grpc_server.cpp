// gRPC unary calls served over one HTTP/2 connection (grpc/grpc doc/PROTOCOL-HTTP2.md).
#include "tests/support/node_standin/grpc_server.h"

#include <map>

#include "tests/support/node_standin/http2_connection.h"

namespace dxshim::test::node_standin {

namespace {

using http2::Connection;
using http2::StreamEvent;

// A request stream until its END_STREAM: no bigger request is ever expected by a stand-in.
constexpr std::size_t kMaxRequestBody = 16 << 20;

struct PendingCall {
  HeaderList headers;
  std::string body;
};

bool Answer(Connection& connection, std::uint32_t stream, const PendingCall& call,
            const GrpcHandler& handler, std::string& error) {
  const std::string* content_type = FindHeader(call.headers, "content-type");
  if (!content_type || content_type->rfind("application/grpc", 0) != 0) {
    return connection.SendHeaders(stream, {{":status", "415"}}, true, error);
  }
  GrpcResponse response;
  std::string why;
  const auto message = SingleMessage(call.body, why);
  if (!message) {
    response.status =
        why.find("compressed") != std::string::npos ? kGrpcUnimplemented : kGrpcInternal;
    response.status_message = why;
  } else {
    const std::string* path = FindHeader(call.headers, ":path");
    response = handler(GrpcRequest{path ? *path : "", call.headers, *message});
  }
  const HeaderList head = {{":status", "200"}, {"content-type", "application/grpc"}};
  if (response.status != kGrpcOk) {  // Trailers-Only
    HeaderList trailers = head;
    trailers.push_back({"grpc-status", std::to_string(response.status)});
    if (!response.status_message.empty())
      trailers.push_back({"grpc-message", PercentEncode(response.status_message)});
    return connection.SendHeaders(stream, trailers, true, error);
  }
  return connection.SendHeaders(stream, head, false, error) &&
         connection.SendData(stream, LengthPrefixed(response.message), false, error) &&
         connection.SendHeaders(stream, {{"grpc-status", "0"}}, true, error);
}

}  // namespace

bool ServeGrpc(ByteStream& stream, const GrpcHandler& handler, std::string& error) {
  Connection connection(stream, Connection::Side::kServer);
  if (!connection.Start(error)) return connection.closed();
  std::map<std::uint32_t, PendingCall> calls;
  std::uint32_t last_stream = 0;
  for (;;) {
    StreamEvent event;
    if (!connection.Next(event, error)) return connection.closed();
    switch (event.kind) {
      case StreamEvent::kGotHeaders: {
        auto it = calls.find(event.stream);
        if (it == calls.end()) {
          // RFC 9113 §5.1.1: a client opens odd streams, each above the last.
          if (event.stream % 2 == 0 || event.stream <= last_stream) {
            error = "HEADERS opening stream " + std::to_string(event.stream);
            connection.SendGoAway(last_stream, http2::kProtocolError, error);
            return false;
          }
          last_stream = event.stream;
          it = calls.emplace(event.stream, PendingCall{std::move(event.headers), {}}).first;
        }  // else: trailers of the request, which gRPC clients do not send; only END_STREAM counts
        if (!event.end_stream) break;
        const bool answered = Answer(connection, event.stream, it->second, handler, error);
        calls.erase(it);
        connection.Forget(event.stream);
        if (!answered) return false;
        break;
      }
      case StreamEvent::kGotData: {
        const auto it = calls.find(event.stream);
        if (it == calls.end()) {  // §5.1: DATA on a stream not open
          if (!connection.SendReset(event.stream, http2::kStreamClosed)) return false;
          break;
        }
        it->second.body += event.data;
        if (it->second.body.size() > kMaxRequestBody) {
          calls.erase(it);
          if (!connection.SendReset(event.stream, http2::kRefusedStream)) return false;
          break;
        }
        if (!event.end_stream) break;
        const bool answered = Answer(connection, event.stream, it->second, handler, error);
        calls.erase(it);
        connection.Forget(event.stream);
        if (!answered) return false;
        break;
      }
      case StreamEvent::kGotReset:  // the client cancelled
        calls.erase(event.stream);
        break;
      case StreamEvent::kGotGoAway:  // no new streams will come; serve until the client closes
        break;
    }
  }
}

}  // namespace dxshim::test::node_standin
