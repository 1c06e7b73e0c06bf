// The few calls under the socket bridge's portable files (socket_api_local.cpp, socket_api_tcp.cpp)
// that differ between Winsock and POSIX beyond their headers: how a socket is opened, the
// address-reuse options, a non-blocking connect's pending error, select's first argument, and
// Poll's reading of poll()'s answer.
// Implemented in socket_api_windows.cpp and socket_api_posix.cpp (SetReadiness here); not for
// the bridge's users.
#pragma once

#include <optional>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

// socket(): close-on-exec on POSIX (a child never inherits it; Winsock's are not inherited).
NativeSocket OpenSocket(int family, int type, int protocol);
// No other socket may bind the address and port while `s` listens (Windows lets a later bind with
// SO_REUSEADDR share it, and take connections meant for it, unless the first forbids:
// SO_EXCLUSIVEADDRUSE). POSIX already forbids it: nothing to do.
bool KeepPortExclusive(NativeSocket s);
// A restarted listener binds its port again at once, past the old connections' TIME_WAIT
// (SO_REUSEADDR on POSIX; Windows binds past TIME_WAIT already, and its SO_REUSEADDR means
// sharing).
bool ReuseTimeWaitPort(NativeSocket s);
// Whether the last connect() on a non-blocking socket is under way (EINPROGRESS,
// WSAEWOULDBLOCK).
bool LastConnectPending();
// select()'s first argument for a set holding `s` (POSIX: s + 1; Windows ignores it); nullopt
// when `s` does not fit an fd_set (POSIX: FD_SETSIZE).
std::optional<int> SelectWidth(NativeSocket s);

// Poll's answer for `entry` from what poll() or WSAPoll() reported: ready to read (`in`), to write
// (`out`), or broken (an error, a hang-up: ready for whatever it waits for; a read or a write
// says which).
inline void SetReadiness(PollEntry& entry, bool in, bool out, bool broken) {
  entry.readable = in || (broken && entry.want_read);
  entry.writable = out || (broken && entry.want_write);
}

}  // namespace dxshim::socket_bridge
