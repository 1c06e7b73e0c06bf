#include "shim/node/kubelet_checkpoint.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace dxshim::node {

std::map<std::string, std::vector<std::string>> RegisteredDevices(const std::string& json) {
  YAML::Node root;
  try {
    root = YAML::Load(json);  // JSON is YAML
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("not JSON: " + e.msg);
  }
  if (!root.IsMap() || !root["Data"].IsMap()) throw std::runtime_error("it has no \"Data\" object");
  const auto registered = root["Data"]["RegisteredDevices"];
  std::map<std::string, std::vector<std::string>> out;
  if (!registered || registered.IsNull()) return out;  // Go writes a nil map as null
  if (!registered.IsMap()) throw std::runtime_error("\"RegisteredDevices\" is not an object");
  for (const auto& entry : registered) {
    auto& ids = out[entry.first.as<std::string>()];
    if (entry.second.IsNull()) continue;
    if (!entry.second.IsSequence()) {
      throw std::runtime_error("the devices of " + entry.first.as<std::string>() +
                               " are not a list");
    }
    for (const auto& id : entry.second) ids.push_back(id.as<std::string>());
  }
  return out;
}

}  // namespace dxshim::node
