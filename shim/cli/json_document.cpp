#include "shim/cli/json_document.h"

#include "shim/base/json_document.h"

namespace dxshim {
namespace {

// A string field, written quoted whatever it looks like.
YAML::Node String(const std::string& s) {
  YAML::Node n(s);
  n.SetTag(kJsonStringTag);
  return n;
}

YAML::Node DeviceNode(const runtime::v1::Device& d) {
  YAML::Node n(YAML::NodeType::Map);
  n["container_path"] = String(d.container_path());
  n["host_path"] = String(d.host_path());
  n["permissions"] = String(d.permissions());
  return n;
}

}  // namespace

void ApplyPlanToJson(const InjectionPlan& plan, YAML::Node& container) {
  if (plan.replace_index) {
    container["devices"][static_cast<std::size_t>(*plan.replace_index)] =
        DeviceNode(plan.replacement);
  }
  // Each list the plan adds to: appended after what the config has, created if it has none.
  const auto append = [&container](const char* list, const auto& entries, const auto& node_of) {
    if (entries.empty()) return;
    auto sequence = container[list];
    if (!sequence.IsSequence()) sequence = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& entry : entries) sequence.push_back(node_of(entry));
    container[list] = sequence;
  };
  append("devices", plan.add_devices, DeviceNode);
  append("mounts", plan.add_mounts, [](const runtime::v1::Mount& m) {
    YAML::Node n(YAML::NodeType::Map);
    n["container_path"] = String(m.container_path());
    n["host_path"] = String(m.host_path());
    n["readonly"] = true;
    return n;
  });
  append("envs", plan.add_envs, [](const runtime::v1::KeyValue& e) {
    YAML::Node n(YAML::NodeType::Map);
    n["key"] = String(e.key());
    n["value"] = String(e.value());
    return n;
  });
  for (const auto& [section, entries] :
       {std::pair{"labels", &plan.labels}, std::pair{"annotations", &plan.annotations}}) {
    auto map = container[section];
    if (!map.IsMap()) map = YAML::Node(YAML::NodeType::Map);
    for (const auto& [k, v] : *entries) map[k] = String(v);
    container[section] = map;
  }
}

}  // namespace dxshim
