#include "shim/install/kubelet/kubelet_checkpoint.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace dxshim::install {

namespace {

// The checkpoint's "Data" object.
YAML::Node DataOf(const std::string& json) {
  YAML::Node root;
  try {
    root = YAML::Load(json);  // JSON is YAML
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("not JSON: " + e.msg);
  }
  if (!root.IsMap() || !root["Data"].IsMap()) throw std::runtime_error("it has no \"Data\" object");
  return root["Data"];
}

std::string TextOf(const YAML::Node& node, const char* what) {
  if (!node || !node.IsScalar()) throw std::runtime_error(std::string("an entry has no ") + what);
  return node.as<std::string>();
}

void AppendIds(const YAML::Node& list, std::vector<std::string>& ids) {
  if (!list || list.IsNull()) return;
  if (!list.IsSequence()) throw std::runtime_error("an entry's device ids are not a list");
  for (const auto& id : list) ids.push_back(id.as<std::string>());
}

}  // namespace

std::vector<PodDeviceEntry> PodDeviceEntries(const std::string& json) {
  const auto entries = DataOf(json)["PodDeviceEntries"];
  std::vector<PodDeviceEntry> out;
  if (!entries || entries.IsNull()) return out;
  if (!entries.IsSequence()) throw std::runtime_error("\"PodDeviceEntries\" is not a list");
  for (const auto& e : entries) {
    if (!e.IsMap()) throw std::runtime_error("a pod device entry is not an object");
    PodDeviceEntry entry;
    entry.pod_uid = TextOf(e["PodUID"], "PodUID");
    entry.container = TextOf(e["ContainerName"], "ContainerName");
    entry.resource = TextOf(e["ResourceName"], "ResourceName");
    const auto ids = e["DeviceIDs"];
    if (ids && ids.IsMap()) {
      for (const auto& numa : ids) AppendIds(numa.second, entry.device_ids);
    } else {
      AppendIds(ids, entry.device_ids);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::map<std::string, std::vector<std::string>> RegisteredDevices(const std::string& json) {
  const auto registered = DataOf(json)["RegisteredDevices"];
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

}  // namespace dxshim::install
