// HTTP/2 frames (RFC 9113 §4.1): a 24-bit length, 8-bit type and flags, a reserved bit and a
// 31-bit stream identifier, then the payload.
#include "tests/support/node_standin/http2_frames.h"

namespace dxshim::test::node_standin::http2 {

std::uint32_t Uint32At(std::string_view data, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = (value << 8) | static_cast<unsigned char>(data[at + i]);
  return value;
}

std::string Uint32Bytes(std::uint32_t value) {
  std::string out(4, '\0');
  for (std::size_t i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (24 - 8 * i)) & 0xFF);
  return out;
}

bool ReadFrame(ByteStream& stream, std::uint32_t max_payload, Frame& frame, std::string& error) {
  char header[9];
  if (!stream.ReadExact(header, sizeof(header))) {
    error = "the connection ended";
    return false;
  }
  const auto byte = [&header](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(header[i]));
  };
  const std::uint32_t length = (byte(0) << 16) | (byte(1) << 8) | byte(2);
  frame.type = static_cast<std::uint8_t>(byte(3));
  frame.flags = static_cast<std::uint8_t>(byte(4));
  frame.stream = Uint32At(std::string_view(header, sizeof(header)), 5) & 0x7FFFFFFF;  // R ignored
  if (length > max_payload) {
    error = "a frame of " + std::to_string(length) + " bytes, over the " +
            std::to_string(max_payload) + " announced";
    return false;
  }
  frame.payload.resize(length);
  if (length > 0 && !stream.ReadExact(frame.payload.data(), length)) {
    error = "the connection ended inside a frame";
    return false;
  }
  return true;
}

bool WriteFrame(ByteStream& stream, std::uint8_t type, std::uint8_t flags, std::uint32_t stream_id,
                std::string_view payload) {
  std::string frame;
  frame.reserve(9 + payload.size());
  const auto length = static_cast<std::uint32_t>(payload.size());
  frame += static_cast<char>((length >> 16) & 0xFF);
  frame += static_cast<char>((length >> 8) & 0xFF);
  frame += static_cast<char>(length & 0xFF);
  frame += static_cast<char>(type);
  frame += static_cast<char>(flags);
  frame += Uint32Bytes(stream_id & 0x7FFFFFFF);
  frame.append(payload);
  return stream.Write(frame.data(), frame.size());
}

std::string SettingsPayload(const std::vector<std::pair<std::uint16_t, std::uint32_t>>& settings) {
  std::string out;
  for (const auto& [id, value] : settings) {
    out += static_cast<char>(id >> 8);
    out += static_cast<char>(id & 0xFF);
    out += Uint32Bytes(value);
  }
  return out;
}

}  // namespace dxshim::test::node_standin::http2
