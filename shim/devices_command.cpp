#include "shim/devices_command.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "devices/linux_discovery.h"

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
      "output", po::value<std::string>()->default_value("table"), "table, yaml or json")(
      "include-integrated", po::bool_switch(), "list integrated GPUs too")(
      "include-detachable", po::bool_switch(), "list detachable GPUs too");
  std::vector<devices::Device> found;
  std::string output;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    output = vm["output"].as<std::string>();
    if (output != "table" && output != "yaml" && output != "json") {
      throw std::invalid_argument("--output '" + output + "' is not table, yaml or json");
    }
    const auto source = vm["source"].as<std::string>();
    constexpr std::string_view kInventory = "inventory:";
    std::vector<devices::Device> all;
    if (source.starts_with(kInventory) && source.size() > kInventory.size()) {
      all = devices::LoadInventoryFile(source.substr(kInventory.size()));
    } else if (source == "auto" || source == "linux") {
      all = devices::DiscoverLinux(vm["sysfs-root"].as<std::string>());
    } else if (source == "windows") {
      throw std::invalid_argument(
          "--source windows: Windows discovery is part of the Windows build of dxshim");
    } else {
      throw std::invalid_argument("--source '" + source +
                                  "' is not auto, linux, windows or inventory:PATH");
    }
    found = devices::SelectUsable(all, vm["include-integrated"].as<bool>(),
                                  vm["include-detachable"].as<bool>());
  } catch (const std::exception& e) {
    std::cerr << "dxshim devices: " << e.what() << "\n";
    // Usage errors exit 2; a source that could not be read (discovery failed) exits 1.
    const bool discovery = dynamic_cast<const devices::InventoryError*>(&e) != nullptr ||
                           dynamic_cast<const devices::DiscoveryError*>(&e) != nullptr;
    return discovery ? 1 : 2;
  }
  if (output == "yaml") {
    std::cout << devices::WriteInventoryYaml(found);
  } else if (output == "json") {
    std::cout << devices::WriteInventoryJson(found);
  } else {
    std::cout << devices::FormatDeviceTable(found);
  }
  return 0;
}

}  // namespace dxshim
