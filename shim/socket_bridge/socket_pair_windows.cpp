// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include "shim/socket_bridge/socket_pair_windows.h"

namespace dxshim::socket_bridge {
namespace {

// How many strangers one pair may turn away before it gives up (each is one accept; ours is
// already queued behind them, so the loop ends either way).
constexpr int kMaxStrangers = 64;

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
  // The connect has completed, so our connection waits in the backlog: accept until it comes.
  for (int strangers = 0; strangers <= kMaxStrangers; ++strangers) {
    Socket accepted(accept(listener, nullptr, nullptr));
    if (!accepted.valid()) {
      error = "cannot accept on 127.0.0.1:" + std::to_string(port) + ": " + LastSocketError();
      return {};
    }
    const auto seen = ConnectionOf(accepted.get());
    if (seen && *seen == ours.Reversed()) return accepted;
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
