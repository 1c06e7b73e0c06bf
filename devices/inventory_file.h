// Inventory files: the node's GPUs as YAML (JSON is accepted, being YAML too), in the format
// `dxshim devices --output yaml` writes, so an operator can snapshot a real Windows node and
// replay it anywhere. Loading is strict: every problem is an error naming the file, the line and
// the field.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

class InventoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<Device> LoadInventoryFile(const std::string& path);
// `origin` names the text in errors (a file name, or "<stdin>").
std::vector<Device> ParseInventory(const std::string& text, const std::string& origin);
std::string WriteInventoryYaml(const std::vector<Device>& devices);
std::string WriteInventoryJson(const std::vector<Device>& devices);

}  // namespace dxshim::devices
