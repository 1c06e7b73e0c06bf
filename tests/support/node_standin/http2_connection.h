// One HTTP/2 connection (RFC 9113), client or server side, as much of it as gRPC unary calls need:
// the preface and SETTINGS exchange, SETTINGS and PING acknowledged, header blocks (HEADERS and
// CONTINUATION, padding and priority fields skipped) decoded with HPACK, DATA with its padding
// removed, and flow control: what is received is given back at once by WINDOW_UPDATE, and DATA is
// sent only within the peer's windows (waiting for its WINDOW_UPDATE when they are spent).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>

#include "tests/support/node_standin/byte_stream.h"
#include "tests/support/node_standin/hpack.h"
#include "tests/support/node_standin/http2_frames.h"

namespace dxshim::test::node_standin::http2 {

// What happened on a stream (or to the connection: kGotGoAway).
struct StreamEvent {
  enum Kind { kGotHeaders, kGotData, kGotReset, kGotGoAway };
  Kind kind = kGotHeaders;
  std::uint32_t stream = 0;
  bool end_stream = false;
  HeaderList headers;             // kGotHeaders
  std::string data;               // kGotData
  std::uint32_t error_code = 0;   // kGotReset, kGotGoAway
  std::uint32_t last_stream = 0;  // kGotGoAway: the last stream the peer will process
};

class Connection {
 public:
  enum class Side { kClient, kServer };
  Connection(ByteStream& stream, Side side) : stream_(stream), side_(side) {}

  // Client: the preface and a SETTINGS frame (push disabled). Server: reads and checks the
  // client's preface, then sends its own SETTINGS. The peer's SETTINGS arrive through Next().
  bool Start(std::string& error);
  // The next stream event, handling connection frames meanwhile. False at the end of the
  // connection (closed() says whether it ended cleanly between frames) or on a connection error
  // (ERROR says which; a GOAWAY naming it has been sent).
  bool Next(StreamEvent& event, std::string& error);
  bool closed() const { return closed_; }

  bool SendHeaders(std::uint32_t stream, const HeaderList& headers, bool end_stream,
                   std::string& error);
  // DATA frames within the peer's windows and frame size; false when the connection fails or the
  // stream is reset while waiting for window.
  bool SendData(std::uint32_t stream, std::string_view data, bool end_stream, std::string& error);
  bool SendReset(std::uint32_t stream, std::uint32_t code);
  bool SendGoAway(std::uint32_t last_stream, std::uint32_t code, std::string_view why);
  // A finished stream: its send window is forgotten.
  void Forget(std::uint32_t stream) { send_windows_.erase(stream); }

 private:
  // Reads one frame and handles it; an event, if the frame made one, is queued in pending_.
  bool ReadOne(std::string& error);
  bool Fail(std::uint32_t code, const std::string& why, std::string& error);
  bool OnSettings(const Frame& frame, std::string& error);
  bool OnWindowUpdate(const Frame& frame, std::string& error);
  bool ReadHeaderBlock(const Frame& first, std::string& error);
  std::int64_t& SendWindow(std::uint32_t stream);

  ByteStream& stream_;
  Side side_;
  HpackDecoder decoder_;
  std::deque<StreamEvent> pending_;
  bool closed_ = false;
  std::int64_t connection_window_ = kDefaultWindow;      // what this side may still send
  std::map<std::uint32_t, std::int64_t> send_windows_;   // per stream
  std::uint32_t peer_initial_window_ = kDefaultWindow;   // its SETTINGS_INITIAL_WINDOW_SIZE
  std::uint32_t peer_max_frame_ = kDefaultMaxFrameSize;  // its SETTINGS_MAX_FRAME_SIZE
};

}  // namespace dxshim::test::node_standin::http2
