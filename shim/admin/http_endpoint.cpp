#include "shim/admin/http_endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "shim/admin/fault_log.h"
#include "shim/admin/http_answer.h"
#include "shim/admin/http_request.h"
#include "shim/base/host_port.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::admin {
namespace {

namespace sb = socket_bridge;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTick{100};           // the longest wait: how soon a stop is seen
constexpr milliseconds kLinger{1000};        // reading what follows an answer before closing
constexpr std::size_t kAcceptsPerTick = 16;  // fewer than max_per_peer: see Accept()
constexpr std::size_t kReadChunk = 4096;
// Reads per connection and turn: a client that keeps sending (after its answer, say) is read a
// little each turn and never holds the thread.
constexpr int kReadsPerTurn = 4;
// With no file descriptor left, accepting waits for one of the endpoint's own connections to
// close; this long at most, since descriptors freed elsewhere in dxshim announce nothing.
constexpr milliseconds kOutOfDescriptorsWait{1000};

}  // namespace

class HttpEndpoint::Server {
 public:
  Server(const std::string& listen, HttpHandlers handlers, HttpLimits limits)
      : handlers_(std::move(handlers)),
        limits_(limits),
        answers_(handlers_, limits.metrics_max_age),
        faults_([](const std::string& line) { spdlog::warn("{}", line); }),
        failures_([](const std::string& line) { spdlog::error("{}", line); }) {
    const auto address = ParseHostPort(listen);
    if (const auto* why = std::get_if<std::string>(&address)) {
      throw std::runtime_error("cannot serve metrics on " + listen + ": " + *why);
    }
    const auto& where = std::get<HostPort>(address);
    std::string error;
    listener_ = sb::ListenTcp(where.host, where.port, port_, error);
    if (!listener_.valid() || !sb::SetNonBlocking(listener_.get())) {
      throw std::runtime_error("cannot serve metrics on " + listen + ": " +
                               (error.empty() ? sb::LastSocketError() : error));
    }
  }

  std::uint16_t port() const { return port_; }

  // The thread's whole life. Nothing escapes it: an exception leaving a thread ends the process,
  // and with it the CRI proxy.
  void Run(const std::atomic<bool>& stop) noexcept {
    while (!stop.load()) {
      try {
        Turn();
      } catch (...) {
        // Between connections (memory ran short, or a callback threw): this turn is lost, the
        // next one starts from what is left.
        try {
          failures_.Note("turns of the endpoint failed", "", HandledException(), Clock::now());
        } catch (...) {  // NOLINT(bugprone-empty-catch): memory is still short; go on
        }
        std::this_thread::sleep_for(kTick);
      }
    }
  }

 private:
  enum class Phase { kReading, kWriting, kLingering, kClosed };
  struct Connection {
    sb::Socket socket;
    std::string peer;
    std::uint64_t order = 0;  // acceptance order: the lowest is the oldest
    Phase phase = Phase::kReading;
    Clock::time_point deadline;
    HttpRequestReader request;
    HttpAnswer answer;
    std::size_t sent = 0;
  };

  void Turn() {
    Forget();  // what a failed turn left
    const bool accepting = Clock::now() >= accept_again_;
    entries_.clear();
    if (accepting) entries_.push_back({listener_.get(), true, false});
    const std::size_t first = entries_.size();  // connections_[i] is entries_[first + i]
    for (const auto& c : connections_) {
      entries_.push_back(
          {c->socket.get(), c->phase != Phase::kWriting, c->phase == Phase::kWriting});
    }
    if (entries_.empty()) {
      // Nothing to wait on (accepting paused, no connection): Winsock refuses to poll nothing.
      std::this_thread::sleep_for(NextWait());
      faults_.Flush(Clock::now());
      failures_.Flush(Clock::now());
      return;
    }
    if (!sb::Poll(entries_, NextWait())) {
      // Not expected; the endpoint keeps trying (a probe may yet be answered) and says so at
      // most once a second.
      failures_.Note("waits on the endpoint's sockets failed", "", sb::LastSocketError(),
                     Clock::now());
      std::this_thread::sleep_for(kTick);
      return;
    }
    const auto now = Clock::now();
    // The connections polled are the first ones of connections_, in order; Accept() appends.
    for (std::size_t i = first; i < entries_.size(); ++i) {
      auto& c = *connections_[i - first];
      if (entries_[i].readable || entries_[i].writable) Guarded(c, now, [&] { Progress(c, now); });
    }
    Expire(now);
    if (accepting && entries_[0].readable) Accept(now);
    Forget();
    faults_.Flush(now);
    failures_.Flush(now);
  }

  // Runs `step` on `c`; whatever it throws closes `c` alone.
  template <typename Step>
  void Guarded(Connection& c, Clock::time_point now, Step&& step) {
    try {
      step();
    } catch (...) {
      Close(c);
      try {
        failures_.Note("connections closed on a failure of the endpoint", c.peer,
                       HandledException(), now);
        Count(HttpRefusal::kInternalError);
      } catch (...) {  // NOLINT(bugprone-empty-catch): the connection is closed, which matters
      }
    }
  }

  milliseconds NextWait() const {
    auto wait = kTick;
    const auto now = Clock::now();
    const auto until = [&](Clock::time_point when) {
      const auto left = std::chrono::ceil<milliseconds>(when - now);
      wait = std::max(milliseconds(0), std::min(wait, left));
    };
    for (const auto& c : connections_) until(c->deadline);
    if (accept_again_ > now) until(accept_again_);
    return wait;
  }

  void Close(Connection& c) {
    c.socket.reset();
    c.phase = Phase::kClosed;
    if (accept_when_one_closes_) accept_again_ = Clock::time_point::min();
  }

  void Progress(Connection& c, Clock::time_point now) {
    if (c.phase == Phase::kReading || c.phase == Phase::kLingering) Read(c, now);
    if (c.phase == Phase::kWriting) Write(c, now);
  }

  void Read(Connection& c, Clock::time_point now) {
    char buffer[kReadChunk];
    for (int reads = 0; reads < kReadsPerTurn; ++reads) {
      const long n = sb::Receive(c.socket.get(), buffer, sizeof buffer);
      if (n < 0 && sb::LastCallWouldBlock()) return;
      if (n <= 0) {  // the client is gone (or ended its side before asking anything)
        Close(c);
        return;
      }
      if (c.phase == Phase::kLingering) continue;  // discarded
      switch (c.request.Feed(std::string_view(buffer, static_cast<std::size_t>(n)))) {
        case HttpRequestReader::State::kIncomplete:
          continue;
        case HttpRequestReader::State::kComplete: {
          auto reply = answers_.For(c.request, now);
          StartAnswer(c, std::move(reply.answer), now);
          if (reply.refusal) Count(*reply.refusal);
          return;
        }
        case HttpRequestReader::State::kTooLarge:
          faults_.Note("requests too large", c.peer, c.request.problem(), now);
          Refuse(c, 431, "Request Header Fields Too Large", HttpRefusal::kTooLarge, now);
          return;
        case HttpRequestReader::State::kMalformed:
          faults_.Note("malformed requests", c.peer, c.request.problem(), now);
          Refuse(c, 400, "Bad Request", HttpRefusal::kMalformed, now);
          return;
      }
    }
  }

  void Refuse(Connection& c, int status, std::string_view reason, HttpRefusal refusal,
              Clock::time_point now) {
    StartAnswer(c,
                std::make_shared<const std::string>(
                    PlainResponse(status, reason, c.request.problem() + "\n")),
                now);
    Count(refusal);
  }

  void Count(HttpRefusal refusal) const {
    if (handlers_.refused) handlers_.refused(refusal);
  }

  void StartAnswer(Connection& c, HttpAnswer answer, Clock::time_point now) {
    c.answer = std::move(answer);
    c.sent = 0;
    c.phase = Phase::kWriting;
    c.deadline = now + limits_.response_timeout;
    Write(c, now);
  }

  void Write(Connection& c, Clock::time_point now) {
    const auto& answer = *c.answer;
    while (c.sent < answer.size()) {
      const long n = sb::Send(c.socket.get(), answer.data() + c.sent, answer.size() - c.sent);
      if (n < 0 && sb::LastCallWouldBlock()) return;
      if (n <= 0) {
        Close(c);
        return;
      }
      c.sent += static_cast<std::size_t>(n);
    }
    // All handed over: end the stream, then read what the client may still send until it closes
    // (closing with unread bytes would reset the connection and could lose the answer).
    sb::ShutdownWrite(c.socket.get());
    c.answer.reset();
    c.phase = Phase::kLingering;
    c.deadline = now + kLinger;
  }

  void Expire(Clock::time_point now) {
    for (auto& c : connections_) {
      if (c->phase == Phase::kClosed || now < c->deadline) continue;
      Guarded(*c, now, [&] { Expired(*c, now); });
    }
  }

  void Expired(Connection& c, Clock::time_point now) {
    if (c.phase == Phase::kReading) {
      const auto what =
          "requests not complete within " + std::to_string(limits_.request_timeout.count()) + " ms";
      faults_.Note(what, c.peer, c.request.started() ? "part of a request" : "nothing", now);
      // What has arrived is read first: closing with bytes unread would reset the connection and
      // could lose the 408 (a client trickling its request has always sent more). Best effort,
      // never waited for: the client may not read.
      char buffer[kReadChunk];
      for (int reads = 0; reads < kReadsPerTurn; ++reads) {
        if (sb::Receive(c.socket.get(), buffer, sizeof buffer) <= 0) break;
      }
      const auto answer = PlainResponse(408, "Request Timeout", "no complete request\n");
      sb::Send(c.socket.get(), answer.data(), answer.size());
      Close(c);
      Count(HttpRefusal::kRequestTimeout);
    } else if (c.phase == Phase::kWriting) {
      faults_.Note(
          "answers not taken within " + std::to_string(limits_.response_timeout.count()) + " ms",
          c.peer, "", now);
      Close(c);
      Count(HttpRefusal::kResponseTimeout);
    } else {
      Close(c);  // lingered long enough after its answer
    }
  }

  // At most kAcceptsPerTick a turn, and each closes at most one older connection of the busiest
  // address (its own, when over max_per_peer). A connection from an address with fewer
  // connections than another is never closed for a newcomer; one from an address that keeps
  // opening more is, once max_per_peer newer ones from it have come: at most kAcceptsPerTick a
  // turn, so it is read at least once more before.
  void Accept(Clock::time_point now) {
    for (std::size_t i = 0; i < kAcceptsPerTick; ++i) {
      auto socket = sb::Accept(listener_.get());
      if (!socket.valid()) {
        if (!sb::LastCallWouldBlock()) AcceptFailed(now);
        return;
      }
      if (!sb::SetNonBlocking(socket.get())) continue;
      auto& c = Admit(std::move(socket), now);
      Guarded(c, now, [&] { Read(c, now); });  // a probe's request is usually there already
    }
  }

  Connection& Admit(sb::Socket socket, Clock::time_point now) {
    auto c = std::make_unique<Connection>();
    c->peer = sb::PeerAddress(socket.get());
    c->socket = std::move(socket);
    c->order = next_order_++;
    c->deadline = now + limits_.request_timeout;
    if (OpenCount(&c->peer) >= limits_.max_per_peer) {
      Displace(&c->peer, HttpRefusal::kPerAddressLimit,
               "connections over " + std::to_string(limits_.max_per_peer) +
                   " from one address (the oldest closed)",
               now);
    } else if (OpenCount(nullptr) >= limits_.max_connections) {
      Displace(nullptr, HttpRefusal::kTotalLimit,
               "connections over " + std::to_string(limits_.max_connections) +
                   " in all (the oldest of the busiest address closed)",
               now);
    }
    connections_.push_back(std::move(c));
    return *connections_.back();
  }

  // The listener stays readable while accepting fails: polling it again at once would spin.
  void AcceptFailed(Clock::time_point now) {
    const bool out_of_descriptors = sb::LastCallOutOfDescriptors();
    const auto error = sb::LastSocketError();
    if (out_of_descriptors) {
      // The connections waiting stay in the listen queue until a descriptor is free.
      accept_again_ = now + kOutOfDescriptorsWait;
      accept_when_one_closes_ = true;
      faults_.Note(
          "accepts failed for want of file descriptors (accepting again once a "
          "connection closes, or after " +
              std::to_string(kOutOfDescriptorsWait.count()) + " ms)",
          "", error, now);
      Count(HttpRefusal::kFdLimit);
    } else {
      accept_again_ = now + kTick;
      accept_when_one_closes_ = false;
      faults_.Note("accepts failed", "", error, now);
    }
  }

  // Open connections of `peer`, or of anyone when it is null.
  std::size_t OpenCount(const std::string* peer) const {
    return static_cast<std::size_t>(
        std::count_if(connections_.begin(), connections_.end(), [&](const auto& c) {
          return c->phase != Phase::kClosed && (peer == nullptr || c->peer == *peer);
        }));
  }

  // Closes the oldest open connection of `peer`, or, with no peer, the oldest of those whose
  // address holds the most: over the total bound that address gives way, so that an address with
  // few (a probe's) keeps them whatever the others do. Between addresses holding as many, age
  // decides, not how the addresses sort.
  void Displace(const std::string* peer, HttpRefusal refusal, const std::string& what,
                Clock::time_point now) {
    std::map<std::string, std::size_t> open;
    std::size_t most = 0;
    if (peer == nullptr) {
      for (const auto& c : connections_) {
        if (c->phase != Phase::kClosed) most = std::max(most, ++open[c->peer]);
      }
    }
    Connection* oldest = nullptr;
    for (auto& c : connections_) {
      if (c->phase == Phase::kClosed) continue;
      if (peer != nullptr ? c->peer != *peer : open[c->peer] != most) continue;
      if (oldest == nullptr || c->order < oldest->order) oldest = c.get();
    }
    if (oldest == nullptr) return;
    faults_.Note(what, oldest->peer, "", now);
    Close(*oldest);
    Count(refusal);
  }

  void Forget() {
    std::erase_if(connections_, [](const auto& c) { return c->phase == Phase::kClosed; });
  }

  sb::NetworkSession network_;
  HttpHandlers handlers_;
  HttpLimits limits_;
  HttpAnswers answers_;
  FaultLog faults_;    // what clients do wrong
  FaultLog failures_;  // what the endpoint itself could not do
  sb::Socket listener_;
  std::uint16_t port_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<sb::PollEntry> entries_;
  std::uint64_t next_order_ = 0;
  // Accepting is paused until then (the descriptors ran out, or accepting failed otherwise);
  // with accept_when_one_closes_, a connection closing ends the pause.
  Clock::time_point accept_again_{};
  bool accept_when_one_closes_ = false;
};

HttpEndpoint::HttpEndpoint(const std::string& listen, HttpHandlers handlers, HttpLimits limits)
    : server_(std::make_unique<Server>(listen, std::move(handlers), limits)),
      port_(server_->port()),
      thread_([this] { server_->Run(stop_); }) {}

HttpEndpoint::~HttpEndpoint() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace dxshim::admin
