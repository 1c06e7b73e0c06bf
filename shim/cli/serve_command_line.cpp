#include "shim/cli/serve_command_line.h"

#include <filesystem>
#include <iostream>

#include "config/device_snapshot_config.h"
#include "config/serve_config_keys.h"
#include "config/serve_option_table.h"

namespace dxshim {

boost::program_options::options_description ServeFlags(const std::string& usage) {
  namespace po = boost::program_options;
  po::options_description desc(usage + "\n\nOptions (a --config file takes the same keys)", 100,
                               50);
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(),
                                                 "YAML configuration file");
  for (const auto& option : config::ServeOptions()) {
    if (!option.set) continue;  // file only
    desc.add_options()(option.key, po::value<std::string>()->value_name(option.type),
                       config::HelpText(option).c_str());
  }
  return desc;
}

bool ReadServeOptions(int argc, char** argv,
                      const boost::program_options::options_description& desc,
                      const std::vector<std::string>& keys, config::ServeConfig& cfg,
                      boost::program_options::variables_map& vm,
                      const std::string& default_config) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return false;
  }
  if (vm.count("config")) {
    config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
  } else if (std::error_code ec;
             !default_config.empty() && std::filesystem::exists(default_config, ec)) {
    config::ApplyServeConfigFile(cfg, default_config);
  }
  for (const auto& key : keys) {
    if (vm.count(key)) config::ApplyServeKey(cfg, key, vm[key].as<std::string>(), "--" + key);
  }
  config::CheckServeConfig(cfg);
  return true;
}

std::unique_ptr<devices::DeviceSnapshot> OpenDeviceSnapshot(
    const config::ServeConfig& cfg,
    std::function<void(const std::vector<devices::Device>&)> loaded) {
  auto options = config::SnapshotOptionsOf(cfg);
  options.loaded = std::move(loaded);
  options.tolerate_initial_failure = true;
  auto snapshot =
      std::make_unique<devices::DeviceSnapshot>(config::DeviceSourceOf(cfg), std::move(options));
  snapshot->StartBackgroundRefresh();
  return snapshot;
}

}  // namespace dxshim
