#include "shim/cli/json_document.h"

#include <string_view>

#include "shim/base/json_text.h"

namespace dxshim {
namespace {

bool IsJsonLiteral(const std::string& s) {
  return s == "true" || s == "false" || s == "null" || IsJsonNumber(s);
}

void Emit(const YAML::Node& node, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  const std::string end_pad(static_cast<std::size_t>(indent), ' ');
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      if (node.size() == 0) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& kv : node) {
        out += (first ? "" : ",\n") + pad + JsonString(kv.first.Scalar()) + ": ";
        Emit(kv.second, indent + 2, out);
        first = false;
      }
      out += "\n" + end_pad + "}";
      return;
    }
    case YAML::NodeType::Sequence: {
      if (node.size() == 0) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (std::size_t i = 0; i < node.size(); ++i) {
        out += (i ? ",\n" : "") + pad;
        Emit(node[i], indent + 2, out);
      }
      out += "\n" + end_pad + "]";
      return;
    }
    case YAML::NodeType::Scalar:
      // A quoted scalar carries the non-specific tag "!"; a plain one "?".
      out += node.Tag() != "!" && IsJsonLiteral(node.Scalar()) ? node.Scalar()
                                                               : JsonString(node.Scalar());
      return;
    default:
      out += "null";
  }
}

YAML::Node String(const std::string& s) {
  YAML::Node n(s);
  n.SetTag("!");  // emitted quoted even when it looks like a number
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

std::string EmitJson(const YAML::Node& node) {
  std::string out;
  Emit(node, 0, out);
  return out + "\n";
}

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
