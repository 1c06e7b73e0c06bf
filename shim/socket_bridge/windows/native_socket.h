// Winsock's socket and process id types for socket_api.h (CMake puts this folder on the include
// path of the Windows build; posix/native_socket.h is the other platform's).
#pragma once

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on

namespace dxshim::socket_bridge {

using NativeSocket = SOCKET;
inline constexpr NativeSocket kNoSocket = INVALID_SOCKET;
using ProcessId = DWORD;

}  // namespace dxshim::socket_bridge
