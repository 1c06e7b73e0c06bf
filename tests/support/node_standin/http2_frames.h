// HTTP/2's frames (RFC 9113 §4.1, §6): the 9-byte frame header, the frame types, flags, settings
// and error codes a gRPC unary call and its connection use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/node_standin/byte_stream.h"

namespace dxshim::test::node_standin::http2 {

// RFC 9113 §3.4: the client connection preface, before the client's first SETTINGS frame.
inline constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Frame types (RFC 9113 §6.1-§6.10).
enum FrameType : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoAway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};

// Flags (RFC 9113 §6): END_STREAM on DATA and HEADERS, ACK on SETTINGS and PING.
inline constexpr std::uint8_t kEndStream = 0x1;
inline constexpr std::uint8_t kAck = 0x1;
inline constexpr std::uint8_t kEndHeaders = 0x4;
inline constexpr std::uint8_t kPadded = 0x8;
inline constexpr std::uint8_t kPriorityFlag = 0x20;

// Settings (RFC 9113 §6.5.2).
enum SettingId : std::uint16_t {
  kHeaderTableSize = 0x1,
  kEnablePush = 0x2,
  kMaxConcurrentStreams = 0x3,
  kInitialWindowSize = 0x4,
  kMaxFrameSize = 0x5,
  kMaxHeaderListSize = 0x6,
};

// Error codes (RFC 9113 §7).
enum ErrorCode : std::uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kStreamClosed = 0x5,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
};

// RFC 9113 §6.5.2 initial values, and the largest window (§6.9.1: 2^31-1).
inline constexpr std::uint32_t kDefaultWindow = 65535;
inline constexpr std::uint32_t kDefaultMaxFrameSize = 16384;
inline constexpr std::int64_t kMaxWindow = 0x7FFFFFFF;

struct Frame {
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
  std::string payload;
};

// Reads one frame; false with ERROR at the end of the stream or when its length is over
// MAX_PAYLOAD (the SETTINGS_MAX_FRAME_SIZE this side announced: §4.2, a FRAME_SIZE_ERROR).
bool ReadFrame(ByteStream& stream, std::uint32_t max_payload, Frame& frame, std::string& error);
bool WriteFrame(ByteStream& stream, std::uint8_t type, std::uint8_t flags, std::uint32_t stream_id,
                std::string_view payload);

// A SETTINGS payload (§6.5.1: 16-bit identifier, 32-bit value, each).
std::string SettingsPayload(const std::vector<std::pair<std::uint16_t, std::uint32_t>>& settings);
// The 32-bit big-endian value at DATA[AT]; the caller checks the size.
std::uint32_t Uint32At(std::string_view data, std::size_t at);
std::string Uint32Bytes(std::uint32_t value);

}  // namespace dxshim::test::node_standin::http2
