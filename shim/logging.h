#pragma once

#include <string_view>

namespace dxshim {

// Logs to stderr, one line per event. Throws std::invalid_argument for an unknown level
// (trace, debug, info, warn, error, critical, off).
void InitLogging(std::string_view level);

}  // namespace dxshim
