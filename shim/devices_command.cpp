#include "shim/devices_command.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "devices/device_table.h"
#include "devices/inventory_file.h"

namespace dxshim {

namespace po = boost::program_options;

int RunDevices(int argc, char** argv) {
  po::options_description desc("dxshim devices [options]\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "source", po::value<std::string>()->default_value(""),
      "where the devices come from: inventory:PATH (a YAML or JSON inventory file)")(
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
    if (!source.starts_with(kInventory) || source.size() == kInventory.size()) {
      // Discovery backends (Windows DXCore/CfgMgr32, Linux sysfs) are not part of this build yet.
      throw std::invalid_argument("--source '" + source +
                                  "': this build reads devices from an inventory file only; "
                                  "use --source inventory:PATH");
    }
    found = devices::SelectUsable(devices::LoadInventoryFile(source.substr(kInventory.size())),
                                  vm["include-integrated"].as<bool>(),
                                  vm["include-detachable"].as<bool>());
  } catch (const std::exception& e) {
    std::cerr << "dxshim devices: " << e.what() << "\n";
    return dynamic_cast<const devices::InventoryError*>(&e) != nullptr ? 1 : 2;
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
