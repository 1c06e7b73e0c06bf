// One HTTP/2 connection (RFC 9113) for gRPC unary calls: what each frame type asks of a peer
// that never pushes, never prioritizes and sends small messages.
#include "tests/support/node_standin/http2_connection.h"

#include <algorithm>

namespace dxshim::test::node_standin::http2 {

namespace {

// This side announces no SETTINGS_MAX_FRAME_SIZE, so frames up to the default are allowed.
constexpr std::uint32_t kOwnMaxFrame = kDefaultMaxFrameSize;

// A frame's padding (RFC 9113 §6.1, §6.2: a Pad Length octet when PADDED, that many octets
// at the end) and a HEADERS frame's priority fields (§6.2: 5 octets when PRIORITY) removed.
bool Unpad(const Frame& frame, std::string_view& content) {
  content = frame.payload;
  std::size_t padding = 0;
  if (frame.flags & kPadded) {
    if (content.empty()) return false;
    padding = static_cast<unsigned char>(content.front());
    content.remove_prefix(1);
  }
  if (frame.type == kHeaders && (frame.flags & kPriorityFlag)) {
    if (content.size() < 5) return false;
    content.remove_prefix(5);
  }
  if (padding > content.size()) return false;  // §6.1: a PROTOCOL_ERROR
  content.remove_suffix(padding);
  return true;
}

}  // namespace

bool Connection::Start(std::string& error) {
  if (side_ == Side::kClient) {
    // §3.4: the preface, then SETTINGS; push disabled (§8.4: a client that never wants one).
    if (!stream_.Write(kClientPreface.data(), kClientPreface.size()) ||
        !WriteFrame(stream_, kSettings, 0, 0, SettingsPayload({{kEnablePush, 0}}))) {
      error = "cannot write the connection preface";
      return false;
    }
    return true;
  }
  std::string preface(kClientPreface.size(), '\0');
  if (!stream_.ReadExact(preface.data(), preface.size())) {
    error = "the connection ended before the client's preface";
    closed_ = true;
    return false;
  }
  if (preface != kClientPreface) {
    error = "no HTTP/2 client preface";
    return false;
  }
  // §3.4: the server's preface is a SETTINGS frame, possibly empty; the defaults suit us.
  if (!WriteFrame(stream_, kSettings, 0, 0, "")) {
    error = "cannot write SETTINGS";
    return false;
  }
  return true;
}

bool Connection::Fail(std::uint32_t code, const std::string& why, std::string& error) {
  error = why;
  SendGoAway(0, code, why);  // §5.4.1: a connection error ends with GOAWAY
  return false;
}

std::int64_t& Connection::SendWindow(std::uint32_t stream) {
  return send_windows_.try_emplace(stream, peer_initial_window_).first->second;
}

bool Connection::OnSettings(const Frame& frame, std::string& error) {
  if (frame.stream != 0) return Fail(kProtocolError, "SETTINGS on a stream", error);
  if (frame.flags & kAck) return true;  // ours, acknowledged: nothing waits for it
  if (frame.payload.size() % 6 != 0) return Fail(kFrameSizeError, "SETTINGS length", error);
  for (std::size_t at = 0; at < frame.payload.size(); at += 6) {
    const auto id =
        static_cast<std::uint16_t>((static_cast<unsigned char>(frame.payload[at]) << 8) |
                                   static_cast<unsigned char>(frame.payload[at + 1]));
    const std::uint32_t value = Uint32At(frame.payload, at + 2);
    if (id == kInitialWindowSize) {
      // §6.9.2: the change applies to every open stream's window.
      if (value > kMaxWindow) return Fail(kFlowControlError, "initial window over 2^31-1", error);
      const std::int64_t delta = static_cast<std::int64_t>(value) - peer_initial_window_;
      for (auto& entry : send_windows_) entry.second += delta;
      peer_initial_window_ = value;
    } else if (id == kMaxFrameSize) {
      if (value < kDefaultMaxFrameSize || value > 0xFFFFFF)
        return Fail(kProtocolError, "SETTINGS_MAX_FRAME_SIZE out of range", error);
      peer_max_frame_ = value;
    } else if (id == kEnablePush && value > 1) {
      return Fail(kProtocolError, "SETTINGS_ENABLE_PUSH not 0 or 1", error);
    }
    // HEADER_TABLE_SIZE bounds the peer's decoder table, which the literal-only encoder never
    // uses; the other settings (and unknown ones, §6.5.2) ask nothing of this side.
  }
  if (!WriteFrame(stream_, kSettings, kAck, 0, "")) return Fail(kInternalError, "write", error);
  return true;
}

bool Connection::OnWindowUpdate(const Frame& frame, std::string& error) {
  if (frame.payload.size() != 4) return Fail(kFrameSizeError, "WINDOW_UPDATE length", error);
  const std::uint32_t increment = Uint32At(frame.payload, 0) & 0x7FFFFFFF;
  if (frame.stream == 0) {
    if (increment == 0) return Fail(kProtocolError, "a WINDOW_UPDATE of 0", error);
    connection_window_ += increment;
    if (connection_window_ > kMaxWindow)
      return Fail(kFlowControlError, "the connection window over 2^31-1", error);
    return true;
  }
  const auto it = send_windows_.find(frame.stream);
  if (it == send_windows_.end()) return true;  // a stream already finished (§6.9: allowed)
  if (increment == 0 || it->second + increment > kMaxWindow) {
    SendReset(frame.stream, increment == 0 ? kProtocolError : kFlowControlError);
    pending_.push_back(StreamEvent{StreamEvent::kGotReset,
                                   frame.stream,
                                   true,
                                   {},
                                   {},
                                   increment == 0 ? kProtocolError : kFlowControlError,
                                   0});
    send_windows_.erase(it);
    return true;
  }
  it->second += increment;
  return true;
}

bool Connection::ReadHeaderBlock(const Frame& first, std::string& error) {
  if (first.stream == 0) return Fail(kProtocolError, "HEADERS on stream 0", error);
  std::string_view content;
  if (!Unpad(first, content)) return Fail(kProtocolError, "HEADERS padding", error);
  std::string block(content);
  bool end_headers = (first.flags & kEndHeaders) != 0;
  while (!end_headers) {  // §6.10: only CONTINUATION of the same stream until END_HEADERS
    Frame next;
    if (!ReadFrame(stream_, kOwnMaxFrame, next, error)) return false;
    if (next.type != kContinuation || next.stream != first.stream)
      return Fail(kProtocolError, "a header block interrupted", error);
    block += next.payload;
    end_headers = (next.flags & kEndHeaders) != 0;
  }
  StreamEvent event;
  event.kind = StreamEvent::kGotHeaders;
  event.stream = first.stream;
  event.end_stream = (first.flags & kEndStream) != 0;
  std::string why;
  if (!decoder_.Decode(block, event.headers, why))
    return Fail(kCompressionError, "HPACK: " + why, error);
  pending_.push_back(std::move(event));
  return true;
}

bool Connection::ReadOne(std::string& error) {
  Frame frame;
  if (!ReadFrame(stream_, kOwnMaxFrame, frame, error)) {
    if (error == "the connection ended")
      closed_ = true;
    else if (error.rfind("a frame of", 0) == 0)
      SendGoAway(0, kFrameSizeError, error);
    return false;
  }
  switch (frame.type) {
    case kSettings:
      return OnSettings(frame, error);
    case kPing:
      // §6.7: 8 octets on stream 0; one that is not an ACK is answered with the same octets.
      if (frame.stream != 0 || frame.payload.size() != 8)
        return Fail(kProtocolError, "a malformed PING", error);
      if (!(frame.flags & kAck) && !WriteFrame(stream_, kPing, kAck, 0, frame.payload))
        return Fail(kInternalError, "write", error);
      return true;
    case kWindowUpdate:
      return OnWindowUpdate(frame, error);
    case kHeaders:
      return ReadHeaderBlock(frame, error);
    case kContinuation:
      return Fail(kProtocolError, "CONTINUATION without HEADERS", error);
    case kPushPromise:  // §8.4: never enabled by this side
      return Fail(kProtocolError, "PUSH_PROMISE though push is disabled", error);
    case kData: {
      if (frame.stream == 0) return Fail(kProtocolError, "DATA on stream 0", error);
      std::string_view content;
      if (!Unpad(frame, content)) return Fail(kProtocolError, "DATA padding", error);
      const bool end_stream = (frame.flags & kEndStream) != 0;
      // §6.9: the whole payload, padding included, counts against the windows; it is given
      // back at once (the stand-ins hold nothing back), the stream's only while it stays open.
      const auto size = static_cast<std::uint32_t>(frame.payload.size());
      if (size > 0) {
        bool written = WriteFrame(stream_, kWindowUpdate, 0, 0, Uint32Bytes(size));
        if (!end_stream)
          written =
              written && WriteFrame(stream_, kWindowUpdate, 0, frame.stream, Uint32Bytes(size));
        if (!written) return Fail(kInternalError, "write", error);
      }
      StreamEvent event;
      event.kind = StreamEvent::kGotData;
      event.stream = frame.stream;
      event.end_stream = end_stream;
      event.data.assign(content);
      pending_.push_back(std::move(event));
      return true;
    }
    case kRstStream:
      if (frame.stream == 0 || frame.payload.size() != 4)
        return Fail(kProtocolError, "a malformed RST_STREAM", error);
      send_windows_.erase(frame.stream);
      pending_.push_back(StreamEvent{
          StreamEvent::kGotReset, frame.stream, true, {}, {}, Uint32At(frame.payload, 0), 0});
      return true;
    case kGoAway:
      if (frame.stream != 0 || frame.payload.size() < 8)
        return Fail(kProtocolError, "a malformed GOAWAY", error);
      pending_.push_back(StreamEvent{StreamEvent::kGotGoAway,
                                     0,
                                     false,
                                     {},
                                     {},
                                     Uint32At(frame.payload, 4),
                                     Uint32At(frame.payload, 0) & 0x7FFFFFFF});
      return true;
    default:  // PRIORITY (§6.3, deprecated) and unknown types (§5.5) are ignored
      return true;
  }
}

bool Connection::Next(StreamEvent& event, std::string& error) {
  while (pending_.empty())
    if (!ReadOne(error)) return false;
  event = std::move(pending_.front());
  pending_.pop_front();
  return true;
}

bool Connection::SendHeaders(std::uint32_t stream, const HeaderList& headers, bool end_stream,
                             std::string& error) {
  // One header block, split into HEADERS and CONTINUATION at the peer's frame size (§4.3).
  const std::string block = HpackEncode(headers);
  const std::size_t max = std::min<std::size_t>(peer_max_frame_, kDefaultMaxFrameSize);
  std::size_t at = 0;
  bool first = true;
  do {
    const std::size_t size = std::min(max, block.size() - at);
    const bool last = at + size == block.size();
    const std::uint8_t flags = static_cast<std::uint8_t>((last ? kEndHeaders : 0) |
                                                         (first && end_stream ? kEndStream : 0));
    if (!WriteFrame(stream_, first ? kHeaders : kContinuation, flags, stream,
                    std::string_view(block).substr(at, size))) {
      error = "cannot write HEADERS";
      return false;
    }
    at += size;
    first = false;
  } while (at < block.size());
  SendWindow(stream);  // the stream is open: its window starts at the peer's initial window
  return true;
}

bool Connection::SendData(std::uint32_t stream, std::string_view data, bool end_stream,
                          std::string& error) {
  const std::size_t max_frame = std::min<std::size_t>(peer_max_frame_, kDefaultMaxFrameSize);
  do {
    const std::int64_t window = std::min(connection_window_, SendWindow(stream));
    if (!data.empty() && window <= 0) {
      // §6.9: wait for WINDOW_UPDATE; stream events meanwhile stay queued for Next().
      if (!ReadOne(error)) return false;
      if (!send_windows_.count(stream)) {
        error = "the stream was reset while waiting for flow-control window";
        return false;
      }
      continue;
    }
    const std::size_t size = std::min(
        {data.size(), max_frame, static_cast<std::size_t>(std::max<std::int64_t>(window, 0))});
    const bool last = size == data.size();
    if (!WriteFrame(stream_, kData, last && end_stream ? kEndStream : 0, stream,
                    data.substr(0, size))) {
      error = "cannot write DATA";
      return false;
    }
    connection_window_ -= static_cast<std::int64_t>(size);
    SendWindow(stream) -= static_cast<std::int64_t>(size);
    data.remove_prefix(size);
  } while (!data.empty());
  return true;
}

bool Connection::SendReset(std::uint32_t stream, std::uint32_t code) {
  send_windows_.erase(stream);
  return WriteFrame(stream_, kRstStream, 0, stream, Uint32Bytes(code));
}

bool Connection::SendGoAway(std::uint32_t last_stream, std::uint32_t code, std::string_view why) {
  return WriteFrame(stream_, kGoAway, 0, 0,
                    Uint32Bytes(last_stream) + Uint32Bytes(code) + std::string(why));
}

}  // namespace dxshim::test::node_standin::http2
