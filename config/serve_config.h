// Configuration of `dxshim serve`. One table of keys serves both sources: a YAML file uses the
// long flag names as keys, and command-line flags override the file key by key.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::config {

struct ServeConfig {
  std::string listen = "unix:///run/dxshim/dxshim.sock";
  std::string runtime = "unix:///run/containerd/containerd.sock";
  std::uint32_t socket_mode = 0660;
  std::string log_level = "info";
  // How long in-flight unary calls may take to finish after SIGTERM/SIGINT.
  std::chrono::milliseconds shutdown_grace{10000};
  // Upper bound of the reconnect backoff towards the runtime.
  std::chrono::milliseconds reconnect_backoff_max{2000};
};

// Any invalid configuration; the message names the source (file and line, or flag), the key and
// what was wrong.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The keys a file or the flags may set, in the order `--help` shows them.
const std::vector<std::string>& ServeKeys();

// Sets one key from its textual value. `source` names where the value came from, for errors.
void ApplyServeKey(ServeConfig& config, std::string_view key, std::string_view value,
                   std::string_view source);

// Applies every key of a YAML mapping file on top of `config`.
void ApplyServeConfigFile(ServeConfig& config, const std::string& path);

// "0660" or "660" (octal, at most 0777).
std::uint32_t ParseSocketMode(std::string_view text);
// "250ms", "10s", "2m"; a bare number means seconds.
std::chrono::milliseconds ParseDuration(std::string_view text);

}  // namespace dxshim::config
