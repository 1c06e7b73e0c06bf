// Setting serve's configuration by key, through the option table (serve_option_table.h): one key
// at a time from the command line, or every key of a YAML file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/serve_config.h"

namespace dxshim::config {

// The keys a file or the flags may set, in the order `--help` shows them.
const std::vector<std::string>& ServeKeys();

// Sets one key from its textual value. `source` names where the value came from, for errors.
void ApplyServeKey(ServeConfig& config, std::string_view key, std::string_view value,
                   std::string_view source);

// Applies every key of a YAML mapping file on top of `config`. Scalar keys are the flags' names;
// list-valued keys (allow-namespaces, deny-namespaces, vm-runtime-handlers) also take a YAML list;
// the mapping-valued extra-runtime-files exists only in files.
void ApplyServeConfigFile(ServeConfig& config, const std::string& path);

}  // namespace dxshim::config
