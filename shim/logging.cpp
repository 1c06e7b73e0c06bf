#include "shim/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <string>

namespace dxshim {

void InitLogging(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str maps anything unknown to "off"; only the word "off" itself may mean that.
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log level '" + std::string(level) +
                                "' is not one of trace, debug, info, warn, error, critical, off");
  }
  auto logger = spdlog::stderr_logger_mt("dxshim");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace dxshim
