// The `extra-runtime-files` section of the configuration file:
//   extra-runtime-files:
//     - vendor: NVIDIA            # or vendor-id: "0x10de"
//       system32:
//         - {source: nvidia-smi.exe, destination: nvidia-smi.exe}
//       syswow64: []
// Sources are relative to the device's DriverStore folder and checked like registry data.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "devices/vendor_runtime_files.h"

namespace dxshim::config {

// `file` names the configuration file in errors (each also gets the line and field). Throws
// ConfigError.
std::vector<devices::VendorRuntimeFiles> ParseExtraRuntimeFiles(const YAML::Node& node,
                                                                const std::string& file);

}  // namespace dxshim::config
