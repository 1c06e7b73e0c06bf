// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include "shim/socket_bridge/socket_pair_windows.h"

#include <chrono>
#include <span>

namespace dxshim::socket_bridge {
namespace {

// How many strangers one pair may turn away before it gives up (each is one accept; ours is
// already queued behind them, so the loop ends either way).
constexpr int kMaxStrangers = 64;
// How long dxshim's own connection, already completed, may take to come out of the backlog: a
// bound, so that a connection something dropped from the queue cannot hold the bridge's thread.
constexpr std::chrono::seconds kOwnConnectionWait{5};

}  // namespace

std::optional<SocketPair> MakeSocketPair(std::string& error,
                                         const std::function<void(const std::string&)>& refused) {
  std::uint16_t port = 0;
  auto listener = ListenLoopback(port, error);  // SO_EXCLUSIVEADDRUSE: nobody else binds it
  if (!listener.valid()) return std::nullopt;
  auto client = ConnectLoopback(port, error);
  if (!client.valid()) return std::nullopt;
  const auto ours = ConnectionOf(client.get());
  if (!ours) {
    error = "cannot read the addresses of a connection to 127.0.0.1:" + std::to_string(port) +
            ": " + LastSocketError();
    return std::nullopt;
  }
  auto accepted = AcceptOwnConnection(listener.get(), *ours, error, refused);
  if (!accepted.valid()) return std::nullopt;
  return SocketPair{std::move(accepted), std::move(client)};
}

Socket AcceptOwnConnection(NativeSocket listener, const TcpConnection& ours, std::string& error,
                           const std::function<void(const std::string&)>& refused) {
  const auto port = ours.remote.port;
  const auto where = "127.0.0.1:" + std::to_string(port);
  // The connect has completed, so our connection waits in the backlog: accept until it comes.
  const auto deadline = std::chrono::steady_clock::now() + kOwnConnectionWait;
  SetNonBlocking(listener);
  for (int strangers = 0; strangers <= kMaxStrangers;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    PollEntry entry{listener, true, false};
    if (left.count() <= 0 || !Poll(std::span(&entry, 1), left) || !entry.readable) {
      error = "dxshim's own connection to " + where + " did not come within " +
              std::to_string(kOwnConnectionWait.count()) + " s";
      return {};
    }
    Socket accepted(accept(listener, nullptr, nullptr));
    if (!accepted.valid()) {
      const int failed = WSAGetLastError();
      if (failed == WSAEWOULDBLOCK) continue;
      // A connection reset or aborted while queued: a stranger's (ours is held open here).
      if (failed == WSAECONNRESET || failed == WSAECONNABORTED) {
        ++strangers;
        if (refused) refused("a connection to " + where + " ended before it was accepted");
        continue;
      }
      error = "cannot accept on " + where + ": " + LastSocketError();
      return {};
    }
    const auto seen = ConnectionOf(accepted.get());
    if (seen && *seen == ours.Reversed()) {
      // Blocking, as an accept on a blocking listener gives it (the listener's mode is
      // inherited); a gRPC handoff makes it non-blocking itself.
      u_long blocking = 0;
      ioctlsocket(accepted.get(), static_cast<long>(FIONBIO), &blocking);
      return accepted;
    }
    ++strangers;
    if (refused) {
      refused("closed, unread, a connection from " +
              (seen ? seen->remote.ToString() : std::string("an unknown address")) +
              " to 127.0.0.1:" + std::to_string(port) +
              ", a port dxshim listened on only to connect to itself");
    }
  }
  error = "more than " + std::to_string(kMaxStrangers) +
          " other connections reached 127.0.0.1:" + std::to_string(port) + " before dxshim's own";
  return {};
}

}  // namespace dxshim::socket_bridge
