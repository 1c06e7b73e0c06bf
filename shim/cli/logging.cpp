#include "shim/cli/logging.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace dxshim {

void InitLogging(std::string_view level, const LogDestination& destination) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str maps anything unknown to "off"; only the word "off" itself may mean that.
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log level '" + std::string(level) +
                                "' is not one of trace, debug, info, warn, error, critical, off");
  }
  std::shared_ptr<spdlog::logger> logger;
  if (destination.path.empty()) {
    logger = std::make_shared<spdlog::logger>("dxshim",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } else {
    std::error_code ignored;
    const auto parent = std::filesystem::path(destination.path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
    try {
      logger = std::make_shared<spdlog::logger>(
          "dxshim",
          std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
              destination.path, static_cast<std::size_t>(destination.max_size), destination.count));
    } catch (const spdlog::spdlog_ex& e) {
      throw std::runtime_error("log file " + destination.path + ": " + e.what());
    }
  }
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace dxshim
