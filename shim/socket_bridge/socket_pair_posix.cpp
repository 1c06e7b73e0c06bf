#include <sys/socket.h>

#include "shim/socket_bridge/socket_pair.h"

namespace dxshim::socket_bridge {

std::optional<SocketPair> MakeSocketPair(
    std::string& error, const std::function<void(const std::string&)>& /*refused*/) {
  int fds[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    error = "socketpair: " + LastSocketError();
    return std::nullopt;
  }
  return SocketPair{Socket(fds[0]), Socket(fds[1])};
}

}  // namespace dxshim::socket_bridge
