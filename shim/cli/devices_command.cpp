#include "shim/cli/devices_command.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "config/device_snapshot_config.h"
#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "devices/device_source.h"
#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "devices/make_device_source.h"
#include "devices/node_labels.h"

namespace dxshim {

namespace po = boost::program_options;

int RunDevices(int argc, char** argv) {
  po::options_description desc("dxshim devices [options]\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "source", po::value<std::string>()->default_value("auto"),
      "where the devices come from: auto (this platform's discovery), linux (DRM render nodes "
      "in sysfs), windows (Windows build only), inventory:PATH (a YAML or JSON inventory file)")(
      "sysfs-root", po::value<std::string>()->default_value("/sys"),
      "root of sysfs for --source linux")(
      "output", po::value<std::string>()->default_value("table"),
      "table, yaml, json or labels (node labels, key=value lines)")(
      "include-integrated", po::bool_switch(), "list integrated GPUs too")(
      "include-detachable", po::bool_switch(), "list detachable GPUs too")(
      "config", po::value<std::string>(),
      "serve's configuration file: its device-source, include-integrated and "
      "include-detachable, so that the list is what serve hands out (--source wins)");
  std::vector<devices::Device> found;
  std::string output;
  std::unique_ptr<devices::DeviceSource> source;
  bool include_integrated = false;
  bool include_detachable = false;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    output = vm["output"].as<std::string>();
    if (output != "table" && output != "yaml" && output != "json" && output != "labels") {
      throw std::invalid_argument("--output '" + output + "' is not table, yaml, json or labels");
    }
    include_integrated = vm["include-integrated"].as<bool>();
    include_detachable = vm["include-detachable"].as<bool>();
    if (vm.count("config") && vm["source"].defaulted()) {
      config::ServeConfig cfg;
      config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
      source = config::DeviceSourceOf(cfg);
      include_integrated = include_integrated || cfg.include_integrated;
      include_detachable = include_detachable || cfg.include_detachable;
    } else {
      source = devices::MakeDeviceSource(vm["source"].as<std::string>(),
                                         vm["sysfs-root"].as<std::string>());
    }
  } catch (const std::exception& e) {
    std::cerr << "dxshim devices: " << e.what() << "\n";
    return 2;  // usage
  }
  try {
    found = devices::SelectUsable(source->Load(), include_integrated, include_detachable);
    for (const auto& warning : source->Warnings()) std::cerr << "warning: " << warning << "\n";
    for (const auto& d : found) {
      if (d.uuid_found_by.starts_with("none: ")) {
        std::cerr << "note: no UUID for " << d.id
                  << ", so no CUDA_VISIBLE_DEVICES for it: " << d.uuid_found_by.substr(6) << "\n";
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "dxshim devices: " << e.what() << "\n";
    return 1;  // the source could not be read: discovery failed
  }
  if (output == "labels") {
    std::cout << devices::FormatLabelLines(devices::NodeLabels(found));
  } else if (output == "yaml") {
    std::cout << devices::WriteInventoryYaml(found);
  } else if (output == "json") {
    std::cout << devices::WriteInventoryJson(found);
  } else {
    std::cout << devices::FormatDeviceTable(found);
  }
  return 0;
}

}  // namespace dxshim
