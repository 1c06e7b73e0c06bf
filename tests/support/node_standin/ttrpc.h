// TTRPC, containerd's RPC between containerd and its shims (containerd/ttrpc @v1.2.8, 22392c2e:
// PROTOCOL.md, channel.go, request.proto): each message a 10-octet header (data length and
// stream id, 32-bit big-endian; message type and flags, one octet each) and data; a unary call is
// one Request (type 0x1) and one Response (type 0x2) on an odd stream id, client-chosen.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/node_standin/byte_stream.h"

namespace dxshim::test::node_standin {

inline constexpr std::uint8_t kTtrpcRequest = 0x1;
inline constexpr std::uint8_t kTtrpcResponse = 0x2;
// channel.go messageLengthMax: larger data is refused.
inline constexpr std::uint32_t kTtrpcMaxData = 4 << 20;

// request.proto: Request { string service = 1; string method = 2; bytes payload = 3;
// int64 timeout_nano = 4; repeated KeyValue metadata = 5; } with KeyValue { key = 1; value = 2 }.
struct TtrpcRequest {
  std::string service;  // containerd.services.events.ttrpc.v1.Events
  std::string method;   // Forward
  std::string payload;
  std::int64_t timeout_nano = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// request.proto: Response { Status status = 1; bytes payload = 2; }, Status being
// google.rpc.Status { int32 code = 1; string message = 2; }.
struct TtrpcStatus {
  int code = 0;  // gRPC's codes
  std::string message;
};

std::string EncodeTtrpcRequest(const TtrpcRequest& request);
bool DecodeTtrpcRequest(std::string_view data, TtrpcRequest& request);
std::string EncodeTtrpcResponse(const TtrpcStatus& status, std::string_view payload);
bool DecodeTtrpcResponse(std::string_view data, TtrpcStatus& status, std::string& payload);

struct TtrpcMessage {
  std::uint32_t stream = 0;
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::string data;
};
bool ReadTtrpcMessage(ByteStream& stream, TtrpcMessage& message, std::string& error);
bool WriteTtrpcMessage(ByteStream& stream, const TtrpcMessage& message);

// Unary calls on one connection, one at a time (stream ids 1, 3, 5...: client.go).
class TtrpcClient {
 public:
  explicit TtrpcClient(ByteStream& stream) : stream_(stream) {}
  // True with STATUS and PAYLOAD once the Response came; false with ERROR when the connection
  // failed first.
  bool Call(const TtrpcRequest& request, TtrpcStatus& status, std::string& payload,
            std::string& error);

 private:
  ByteStream& stream_;
  std::uint32_t next_stream_ = 1;
};

// A handler answers one request: its status, and its response payload in PAYLOAD.
using TtrpcHandler = std::function<TtrpcStatus(const TtrpcRequest&, std::string& payload)>;
// Serves unary requests on STREAM until the client closes it (true) or breaks the protocol
// (false, ERROR says how).
bool ServeTtrpc(ByteStream& stream, const TtrpcHandler& handler, std::string& error);

}  // namespace dxshim::test::node_standin
