// Windows only: the step of MakeSocketPair (socket_pair.h) that tells dxshim's own connection
// from a stranger's, on its own so that the wine test can put a stranger first in the backlog.
#pragma once

#include <functional>
#include <string>

#include "shim/socket_bridge/socket_pair.h"
#include "shim/socket_bridge/tcp_endpoint.h"

namespace dxshim::socket_bridge {

// Accepts on `listener` until the connection whose client end is `ours` (as that socket sees
// it: local, then the listener's address) comes, closing every other one unread and telling
// `refused` who it was; invalid with `error` set when accept fails or too many strangers came.
Socket AcceptOwnConnection(NativeSocket listener, const TcpConnection& ours, std::string& error,
                           const std::function<void(const std::string&)>& refused);

}  // namespace dxshim::socket_bridge
