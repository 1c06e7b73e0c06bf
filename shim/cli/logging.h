#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dxshim {

// Where log lines go: stderr when `path` is empty, otherwise a file rotated when it reaches
// `max_size` bytes, keeping `count` older files (PATH.1 is the newest of them).
struct LogDestination {
  std::string path;
  std::uint64_t max_size = 10u << 20;
  unsigned count = 5;
};

// One line per event. Throws std::invalid_argument for an unknown level (trace, debug, info,
// warn, error, critical, off) and std::runtime_error naming a log file that cannot be opened.
void InitLogging(std::string_view level, const LogDestination& destination = {});

}  // namespace dxshim
