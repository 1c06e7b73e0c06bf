// What endpoint.cpp leaves to the platform (endpoint_windows.cpp, endpoint_posix.cpp): every
// endpoint but tcp://, that is unix sockets (POSIX) and named pipes (Windows), each refused with
// a reason on the other platform. Internal to ParseEndpoint.
#pragma once

#include <string_view>

#include "shim/proxy/endpoint.h"

namespace dxshim {

inline constexpr std::string_view kUnixScheme = "unix://";

// Throws std::invalid_argument "endpoint '<text>': <why>".
[[noreturn]] void RejectEndpoint(std::string_view text, std::string_view why);

// `text` (not empty, not tcp://) as this platform's endpoint; throws std::invalid_argument.
Endpoint ParseLocalEndpoint(std::string_view text);

}  // namespace dxshim
