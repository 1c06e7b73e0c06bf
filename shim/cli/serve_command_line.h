// The command line of the commands that read serve's configuration (`serve`, `device-plugin`):
// --config first, then each flag of `keys` on top of it, key by key.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/serve_config.h"
#include "devices/device_source.h"

namespace dxshim {

// --help, --config and a flag for each key of the option table that flags may set, under
// `usage` ("dxshim serve [options]").
boost::program_options::options_description ServeFlags(const std::string& usage);

// Parses `argv` with `desc` into `vm` and applies the configuration file (--config, else
// `default_config` when given and it exists) and the flags to `cfg`. False when --help was asked
// for (the help is printed). Throws what parsing and the keys throw.
bool ReadServeOptions(int argc, char** argv,
                      const boost::program_options::options_description& desc,
                      const std::vector<std::string>& keys, config::ServeConfig& cfg,
                      boost::program_options::variables_map& vm,
                      const std::string& default_config = "");

// The device snapshot the configuration describes (source, filters, operator extras, refresh),
// refreshing in the background; `loaded` (may be empty) sees each read of the source. A source
// unreadable at start leaves it empty and retrying; throws only for a source that is not valid
// at all.
std::unique_ptr<devices::DeviceSnapshot> OpenDeviceSnapshot(
    const config::ServeConfig& cfg,
    std::function<void(const std::vector<devices::Device>&)> loaded = {});

}  // namespace dxshim
