#include "shim/socket_bridge/stream_bridge.h"

#include <array>
#include <vector>

namespace dxshim::socket_bridge {
namespace {

// How often a bridge with nothing to do checks whether it was asked to stop.
constexpr std::chrono::milliseconds kStopCheck{200};
constexpr std::size_t kBufferBytes = std::size_t{64} * 1024;

// One direction: bytes read from `from` wait in `buffer` until `to` takes them.
struct Direction {
  NativeSocket from;
  NativeSocket to;
  std::vector<char> buffer = std::vector<char>(kBufferBytes);
  std::size_t begin = 0, end = 0;
  bool ended = false;  // `from` ended its stream, and `to` was told (half-close)
  bool empty() const { return begin == end; }
  bool wants_read() const { return !ended && empty(); }
};

enum class Step { kOk, kFailed };

Step ReadInto(Direction& d) {
  const long n = Receive(d.from, d.buffer.data(), d.buffer.size());
  if (n > 0) {
    d.begin = 0;
    d.end = static_cast<std::size_t>(n);
    return Step::kOk;
  }
  if (n == 0) {
    d.ended = true;
    ShutdownWrite(d.to);
    return Step::kOk;
  }
  return LastCallWouldBlock() ? Step::kOk : Step::kFailed;
}

Step WriteFrom(Direction& d) {
  const long n = Send(d.to, d.buffer.data() + d.begin, d.end - d.begin);
  if (n > 0) {
    d.begin += static_cast<std::size_t>(n);
    if (d.begin == d.end) d.begin = d.end = 0;
    return Step::kOk;
  }
  return n < 0 && LastCallWouldBlock() ? Step::kOk : Step::kFailed;
}

}  // namespace

StreamBridge::StreamBridge(Socket client, Socket backend, Admission admit,
                           OwnConnections::Registration listed)
    : client_(std::move(client)),
      backend_(std::move(backend)),
      admit_(std::move(admit)),
      listed_(std::move(listed)) {}

StreamBridge::~StreamBridge() { Stop(); }

void StreamBridge::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void StreamBridge::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  Close();
}

void StreamBridge::Close() {
  // Unlisted first: a call over it is not the bridge's once the bridge has ended.
  listed_.reset();
  client_.reset();
  backend_.reset();
  finished_ = true;
}

void StreamBridge::Run() {
  Direction up{client_.get(), backend_.get()};
  Direction down{backend_.get(), client_.get()};
  bool admitted = !admit_;
  if (!SetNonBlocking(client_.get()) || !SetNonBlocking(backend_.get())) stopping_ = true;
  while (!stopping_ && !(up.ended && up.empty() && down.ended && down.empty())) {
    // Each socket waits for what its two directions need: reading when its outgoing buffer is
    // free, writing when its incoming buffer holds bytes. A socket with nothing to wait for
    // (both of its directions blocked on the other side, or done) is left out of the poll.
    std::array<PollEntry, 2> entries;
    std::size_t count = 0;
    const auto add = [&](NativeSocket s, bool read, bool write) {
      if (read || write) entries[count++] = PollEntry{s, read, write};
    };
    add(client_.get(), up.wants_read(), !down.empty());
    add(backend_.get(), down.wants_read() && admitted, !up.empty() && admitted);
    if (count == 0 || !Poll(std::span(entries.data(), count), kStopCheck)) break;
    Step step = Step::kOk;
    for (std::size_t i = 0; i < count && step == Step::kOk; ++i) {
      const auto& e = entries[i];
      const bool is_client = e.socket == client_.get();
      auto& in = is_client ? up : down;   // read from this socket
      auto& out = is_client ? down : up;  // written to this socket
      if (e.readable && in.wants_read()) {
        step = ReadInto(in);
        if (step == Step::kOk && is_client && !admitted && !in.empty()) {
          admitted = admit_(client_.get());
          if (!admitted) step = Step::kFailed;
        }
      }
      if (step == Step::kOk && e.writable && !out.empty()) step = WriteFrom(out);
    }
    if (step == Step::kFailed) break;
  }
  Close();
}

}  // namespace dxshim::socket_bridge
