// gRPC's message framing and status message encoding (grpc/grpc doc/PROTOCOL-HTTP2.md).
#include "tests/support/node_standin/grpc_call.h"

#include "tests/support/node_standin/http2_frames.h"

namespace dxshim::test::node_standin {

std::string LengthPrefixed(std::string_view message) {
  std::string out(1, '\0');  // Compressed-Flag 0: the message as it is
  out += http2::Uint32Bytes(static_cast<std::uint32_t>(message.size()));
  out.append(message);
  return out;
}

std::optional<std::string> SingleMessage(std::string_view body, std::string& why) {
  if (body.empty()) return std::string();
  if (body.size() < 5) {
    why = "a message prefix cut short";
    return std::nullopt;
  }
  if (body[0] != 0) {
    why = "a compressed message (no grpc-encoding is supported)";
    return std::nullopt;
  }
  const std::uint32_t length = http2::Uint32At(body, 1);
  if (length != body.size() - 5) {
    why = "not exactly one message (" + std::to_string(body.size() - 5) +
          " bytes, the prefix says " + std::to_string(length) + ")";
    return std::nullopt;
  }
  return std::string(body.substr(5));
}

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte <= 0x7E && byte != '%') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

std::string PercentDecode(std::string_view text) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace dxshim::test::node_standin
