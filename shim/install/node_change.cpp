#include "shim/install/node_change.h"

#include <algorithm>

#include "shim/base/ascii_case.h"

namespace dxshim::install {

std::string NodeChange::Describe() const {
  switch (kind) {
    case Kind::kFile:
      return "file " + target;
    case Kind::kRegistry:
      return "registry value HKLM\\" + target + "\\" + name;
    case Kind::kServiceCommandLine:
      return "service " + target + "'s command line";
    case Kind::kServiceDependencies:
      return "service " + target + "'s dependencies";
  }
  return target;
}

std::optional<std::string> CurrentValue(NodeSystem& node, const NodeChange& change) {
  switch (change.kind) {
    case NodeChange::Kind::kFile:
      return node.ReadFile(change.target);
    case NodeChange::Kind::kRegistry: {
      const auto value = node.ReadRegistry(change.target, change.name);
      return value ? std::optional(value->data) : std::nullopt;
    }
    case NodeChange::Kind::kServiceCommandLine:
    case NodeChange::Kind::kServiceDependencies: {
      const auto service = node.Service(change.target);
      if (!service) return std::nullopt;
      return change.kind == NodeChange::Kind::kServiceCommandLine
                 ? service->command_line
                 : JoinDependencies(service->dependencies);
    }
  }
  return std::nullopt;
}

void WriteValue(NodeSystem& node, const NodeChange& change,
                const std::optional<std::string>& value) {
  const std::string data = value.value_or("");
  switch (change.kind) {
    case NodeChange::Kind::kFile:
      if (value) {
        node.WriteFile(change.target, *value);
      } else {
        node.RemoveFile(change.target);
      }
      return;
    case NodeChange::Kind::kRegistry:
      node.WriteRegistry(change.target, change.name, RegistryString{data, change.expand});
      return;
    case NodeChange::Kind::kServiceCommandLine:
      node.SetServiceCommandLine(change.target, data);
      return;
    case NodeChange::Kind::kServiceDependencies:
      node.SetServiceDependencies(change.target, SplitDependencies(data));
      return;
  }
}

std::string JoinDependencies(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : "/") + name;
  return joined;
}

std::vector<std::string> SplitDependencies(const std::string& joined) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= joined.size()) {
    const auto slash = joined.find('/', start);
    const auto end = slash == std::string::npos ? joined.size() : slash;
    if (end > start) names.push_back(joined.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return names;
}

std::string WithoutDependency(const std::string& joined, const std::string& name) {
  auto kept = SplitDependencies(joined);
  std::erase_if(kept, [&](const std::string& d) { return EqualsIgnoreCase(d, name); });
  return JoinDependencies(kept);
}

}  // namespace dxshim::install
