#include "shim/cli/serve_options.h"

#include <iostream>

#include "devices/make_device_source.h"

namespace dxshim {

bool ReadServeOptions(int argc, char** argv,
                      const boost::program_options::options_description& desc,
                      const std::vector<std::string>& keys, config::ServeConfig& cfg,
                      boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return false;
  }
  if (vm.count("config")) config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
  for (const auto& key : keys) {
    if (vm.count(key)) config::ApplyServeKey(cfg, key, vm[key].as<std::string>(), "--" + key);
  }
  config::CheckServeConfig(cfg);
  return true;
}

std::unique_ptr<devices::DeviceSnapshot> OpenDeviceSnapshot(
    const config::ServeConfig& cfg,
    std::function<void(const std::vector<devices::Device>&)> loaded) {
  devices::SnapshotOptions options;
  options.loaded = std::move(loaded);
  options.include_integrated = cfg.include_integrated;
  options.include_detachable = cfg.include_detachable;
  options.extra_runtime_files = cfg.extra_runtime_files;
  options.refresh_interval = cfg.device_refresh;
  options.tolerate_initial_failure = true;
  auto snapshot = std::make_unique<devices::DeviceSnapshot>(
      devices::MakeDeviceSource(cfg.device_source, cfg.sysfs_root), options);
  snapshot->StartBackgroundRefresh();
  return snapshot;
}

}  // namespace dxshim
