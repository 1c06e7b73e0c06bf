// Named-pipe endpoints as kubelet and containerd write them on Windows: `npipe://./pipe/<name>`
// or `npipe:////./pipe/<name>` (both mean \\.\pipe\<name>). Portable, so it is tested on Linux
// and shared by the Windows transport.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

inline constexpr std::string_view kPipeScheme = "npipe://";

// The Win32 path (\\.\pipe\<name>). Throws std::invalid_argument naming the text and the
// problem: not npipe://, a remote host (only local pipes), an empty name, a name with a
// separator or a control character, or longer than 256 characters.
std::string PipePathFromEndpoint(std::string_view text);

// The endpoint for a path PipePathFromEndpoint returned: \\.\pipe\x -> npipe://./pipe/x.
std::string PipeEndpointFromPath(std::string_view path);

}  // namespace dxshim
