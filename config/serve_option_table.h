// Every key of `dxshim serve`'s configuration, in one table: its name, what kind of value it
// takes, its default on Linux and on Windows, its help, and whether the device plugin child gets
// it. Parsing (serve_config.h), the defaults of ServeConfig, `--help` of serve and device-plugin,
// the child's command line and the option table of docs/configuration.md (checked by
// tests/config/serve_option_table_test.cpp) all come from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/serve_config.h"

namespace dxshim::config {

struct ServeOption {
  const char* key;
  const char* type;  // the value's kind, shown by --help: endpoint, duration, bool, count, ...
  const char* linux_default;    // in the key's own syntax ("-": none)
  const char* windows_default;  // nullptr: as on Linux
  const char* default_note;     // after the default in the docs' table ("stderr", "none"), or ""
  // One line; `code` in backticks (the docs show them, --help does not).
  const char* help;
  bool to_plugin;  // the device plugin child (`dxshim device-plugin`) is given it
  // Sets the key from its text; throws ConfigError. Null: the key exists only in files
  // (extra-runtime-files, a mapping: serve_config_keys.cpp reads it).
  void (*set)(ServeConfig&, std::string_view);
  // The value in the key's syntax, for the child's command line; null unless to_plugin.
  std::string (*get)(const ServeConfig&);
};

// The table, in the order --help and docs/configuration.md show it.
const std::vector<ServeOption>& ServeOptions();
// The option named `key`, or nullptr.
const ServeOption* FindServeOption(std::string_view key);

// The default on the platform this was built for.
const char* PlatformDefault(const ServeOption& option);
// --help's text: the help without backticks, and the default.
std::string HelpText(const ServeOption& option);
// The option's row of docs/configuration.md's table: | `key` | default | help |
std::string ReferenceRow(const ServeOption& option);

// The keys the device plugin child is given, and its arguments for `cfg`
// ("device-plugin", "--key", "value", ...).
std::vector<std::string> PluginKeys();
std::vector<std::string> PluginArgs(const ServeConfig& cfg);

}  // namespace dxshim::config
