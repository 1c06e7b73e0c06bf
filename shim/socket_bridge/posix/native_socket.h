// POSIX's socket and process id types for socket_api.h (CMake puts this folder on the include
// path of the POSIX build; windows/native_socket.h is the other platform's).
#pragma once

namespace dxshim::socket_bridge {

using NativeSocket = int;
inline constexpr NativeSocket kNoSocket = -1;
using ProcessId = int;

}  // namespace dxshim::socket_bridge
