// One change `dxshim install` makes to a node, with the value before and after it: what the
// install record keeps, what uninstall checks (the current value must still be `after`) and
// restores (`before`, byte for byte).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/install/system/node_system.h"

namespace dxshim::install {

struct NodeChange {
  enum class Kind {
    kFile,                 // target: the file's path; before nullopt: it did not exist
    kRegistry,             // target: HKLM key, name: the value's name
    kServiceCommandLine,   // target: the service
    kServiceDependencies,  // target: the service; values: names joined by '/'
  };
  Kind kind = Kind::kFile;
  std::string target;
  std::string name;
  bool expand = false;  // kRegistry: REG_EXPAND_SZ
  std::optional<std::string> before;
  std::string after;
  std::string why;  // one line for the operator

  std::string Describe() const;  // "file C:\x.yaml", "service kubelet's command line", ...
  bool operator==(const NodeChange&) const = default;
};

// The value the node holds now for what `change` changes; nullopt: a file that does not exist.
std::optional<std::string> CurrentValue(NodeSystem& node, const NodeChange& change);
// Writes `value` where `change` points; nullopt removes the file (it did not exist before).
void WriteValue(NodeSystem& node, const NodeChange& change,
                const std::optional<std::string>& value);

std::string JoinDependencies(const std::vector<std::string>& names);
std::vector<std::string> SplitDependencies(const std::string& joined);
// `joined` without `name` (any case), the others as they were.
std::string WithoutDependency(const std::string& joined, const std::string& name);

}  // namespace dxshim::install
