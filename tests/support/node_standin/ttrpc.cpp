// TTRPC's framing and its Request and Response messages (containerd/ttrpc @v1.2.8).
#include "tests/support/node_standin/ttrpc.h"

#include "tests/support/node_standin/http2_frames.h"
#include "tests/support/node_standin/protobuf_wire.h"

namespace dxshim::test::node_standin {

std::string EncodeTtrpcRequest(const TtrpcRequest& request) {
  std::string out;
  proto::PutBytes(out, 1, request.service);
  proto::PutBytes(out, 2, request.method);
  if (!request.payload.empty()) proto::PutBytes(out, 3, request.payload);
  if (request.timeout_nano != 0)
    proto::PutUint(out, 4, static_cast<std::uint64_t>(request.timeout_nano));
  for (const auto& [key, value] : request.metadata) {
    std::string pair;
    proto::PutBytes(pair, 1, key);
    proto::PutBytes(pair, 2, value);
    proto::PutBytes(out, 5, pair);
  }
  return out;
}

bool DecodeTtrpcRequest(std::string_view data, TtrpcRequest& request) {
  request = TtrpcRequest{};
  proto::Reader reader(data);
  proto::Field field;
  while (reader.Next(field)) {
    if (field.number == 1 && field.wire_type == proto::kLength) request.service = field.bytes;
    if (field.number == 2 && field.wire_type == proto::kLength) request.method = field.bytes;
    if (field.number == 3 && field.wire_type == proto::kLength) request.payload = field.bytes;
    if (field.number == 4 && field.wire_type == proto::kVarint)
      request.timeout_nano = static_cast<std::int64_t>(field.varint);
    if (field.number == 5 && field.wire_type == proto::kLength) {
      const auto key = proto::BytesField(field.bytes, 1);
      const auto value = proto::BytesField(field.bytes, 2);
      request.metadata.emplace_back(key.value_or(""), value.value_or(""));
    }
  }
  return reader.ok();
}

std::string EncodeTtrpcResponse(const TtrpcStatus& status, std::string_view payload) {
  // server.go always sets the status, OK too (an empty google.rpc.Status).
  std::string rpc_status;
  if (status.code != 0) proto::PutUint(rpc_status, 1, static_cast<std::uint32_t>(status.code));
  if (!status.message.empty()) proto::PutBytes(rpc_status, 2, status.message);
  std::string out;
  proto::PutBytes(out, 1, rpc_status);
  if (!payload.empty()) proto::PutBytes(out, 2, payload);
  return out;
}

bool DecodeTtrpcResponse(std::string_view data, TtrpcStatus& status, std::string& payload) {
  status = TtrpcStatus{};
  payload.clear();
  proto::Reader reader(data);
  proto::Field field;
  while (reader.Next(field)) {
    if (field.number == 1 && field.wire_type == proto::kLength) {
      status.code = static_cast<int>(proto::VarintField(field.bytes, 1).value_or(0));
      status.message = proto::BytesField(field.bytes, 2).value_or("");
    }
    if (field.number == 2 && field.wire_type == proto::kLength) payload = field.bytes;
  }
  return reader.ok();
}

bool ReadTtrpcMessage(ByteStream& stream, TtrpcMessage& message, std::string& error) {
  char header[10];
  if (!stream.ReadExact(header, sizeof(header))) {
    error = "the connection ended";
    return false;
  }
  const std::string_view view(header, sizeof(header));
  const std::uint32_t length = http2::Uint32At(view, 0);
  message.stream = http2::Uint32At(view, 4);
  message.type = static_cast<std::uint8_t>(header[8]);
  message.flags = static_cast<std::uint8_t>(header[9]);
  if (length > kTtrpcMaxData) {
    error = "a message of " + std::to_string(length) + " bytes, over ttrpc's 4 MiB";
    return false;
  }
  message.data.resize(length);
  if (length > 0 && !stream.ReadExact(message.data.data(), length)) {
    error = "the connection ended inside a message";
    return false;
  }
  return true;
}

bool WriteTtrpcMessage(ByteStream& stream, const TtrpcMessage& message) {
  std::string out = http2::Uint32Bytes(static_cast<std::uint32_t>(message.data.size())) +
                    http2::Uint32Bytes(message.stream);
  out += static_cast<char>(message.type);
  out += static_cast<char>(message.flags);
  out += message.data;
  return stream.Write(out.data(), out.size());
}

bool TtrpcClient::Call(const TtrpcRequest& request, TtrpcStatus& status, std::string& payload,
                       std::string& error) {
  const std::uint32_t stream = next_stream_;
  next_stream_ += 2;
  if (!WriteTtrpcMessage(stream_, {stream, kTtrpcRequest, 0, EncodeTtrpcRequest(request)})) {
    error = "cannot write the request";
    return false;
  }
  for (;;) {
    TtrpcMessage message;
    if (!ReadTtrpcMessage(stream_, message, error)) return false;
    if (message.stream != stream || message.type != kTtrpcResponse) continue;
    if (!DecodeTtrpcResponse(message.data, status, payload)) {
      error = "a malformed Response";
      return false;
    }
    return true;
  }
}

bool ServeTtrpc(ByteStream& stream, const TtrpcHandler& handler, std::string& error) {
  for (;;) {
    TtrpcMessage message;
    if (!ReadTtrpcMessage(stream, message, error)) return error == "the connection ended";
    if (message.type != kTtrpcRequest) continue;  // Data of streams, which no stand-in serves
    TtrpcRequest request;
    std::string payload;
    TtrpcStatus status;
    if (!DecodeTtrpcRequest(message.data, request)) {
      status = {3, "a malformed Request"};  // InvalidArgument
    } else {
      status = handler(request, payload);
    }
    if (!WriteTtrpcMessage(
            stream, {message.stream, kTtrpcResponse, 0, EncodeTtrpcResponse(status, payload)})) {
      error = "cannot write a response";
      return false;
    }
  }
}

}  // namespace dxshim::test::node_standin
