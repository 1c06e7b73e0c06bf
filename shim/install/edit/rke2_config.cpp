#include "shim/install/edit/rke2_config.h"

#include <yaml-cpp/yaml.h>

#include "shim/base/json_text.h"
#include "shim/install/edit/command_line.h"

namespace dxshim::install {
namespace {

YAML::Node Load(const Rke2ConfigFile& file) {
  try {
    const YAML::Node root = YAML::Load(file.text);
    if (root && !root.IsNull() && !root.IsMap()) {
      throw EditError("rke2 config " + file.path + " is not a mapping of keys to values");
    }
    return root;
  } catch (const YAML::Exception& e) {
    throw EditError("rke2 config " + file.path + " does not parse: " + e.what());
  }
}

// A key's items: a list of strings, or one string.
std::vector<std::string> Items(const Rke2ConfigFile& file, const YAML::Node& value,
                               const std::string& key) {
  std::vector<std::string> items;
  if (!value || value.IsNull()) return items;
  if (value.IsScalar()) return {value.Scalar()};
  if (!value.IsSequence()) {
    throw EditError("rke2 config " + file.path + ": " + key + " is neither a string nor a list");
  }
  for (const auto& item : value) {
    if (!item.IsScalar()) {
      throw EditError("rke2 config " + file.path + ": an item of " + key + " is not a string");
    }
    items.push_back(item.Scalar());
  }
  return items;
}

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == '_' ? '-' : a[i]) != (b[i] == '_' ? '-' : b[i])) return false;
  }
  return true;
}

std::string List(const std::string& key, const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string out = key + ":\n";
  for (const auto& item : items) out += "  - " + JsonString(item) + "\n";
  return out;
}

}  // namespace

std::vector<std::string> Rke2KubeletArgs(const std::vector<Rke2ConfigFile>& files) {
  std::vector<std::string> items;
  for (const auto& file : files) {
    const YAML::Node root = Load(file);
    if (!root || root.IsNull()) continue;
    for (const auto& entry : root) {
      const std::string key = entry.first.Scalar();
      if (key == "kubelet-arg") items = Items(file, entry.second, key);
      if (key == "kubelet-arg+") {
        const auto more = Items(file, entry.second, key);
        items.insert(items.end(), more.begin(), more.end());
      }
    }
  }
  return items;
}

std::optional<std::string> Rke2KubeletFlag(const std::vector<std::string>& items,
                                           std::string_view name) {
  // nullopt in `values` stands for rke2's own default value of the flag.
  std::vector<std::optional<std::string>> values;
  bool initial = true;
  for (std::string_view item : items) {
    if (item.substr(0, 2) == "--") item.remove_prefix(2);
    const auto eq = item.find('=');
    const std::string_view arg = item.substr(0, eq);
    const std::string value =
        eq == std::string_view::npos ? "true" : std::string(item.substr(eq + 1));
    const auto end = arg.find_last_not_of("-+");
    if (end == std::string_view::npos || !SameName(arg.substr(0, end + 1), name)) continue;
    std::vector<std::optional<std::string>> next;
    if (arg.back() == '-') next.emplace_back(value);
    if (arg.back() != '-' && arg.back() != '+') {
      next = values;
    } else {
      if (initial) next.emplace_back(std::nullopt);
      next.insert(next.end(), values.begin(), values.end());
    }
    if (arg.back() != '-') next.emplace_back(value);
    values = std::move(next);
    initial = false;
  }
  return values.empty() ? std::nullopt : values.back();
}

std::optional<std::string> Rke2Setting(const std::vector<Rke2ConfigFile>& files,
                                       std::string_view key) {
  std::optional<std::string> value;
  for (const auto& file : files) {
    const YAML::Node root = Load(file);
    if (root && root.IsMap() && root[std::string(key)] && root[std::string(key)].IsScalar()) {
      value = root[std::string(key)].Scalar();
    }
  }
  return value;
}

std::string Rke2DropInText(const std::vector<std::string>& kubelet_args,
                           const std::vector<std::string>& node_labels) {
  return "# Written by dxshim install, removed by dxshim uninstall: kubelet talks to containerd\n"
         "# through dxshim (its items are added to those of the files before this one).\n" +
         List("kubelet-arg+", kubelet_args) + List("node-label+", node_labels);
}

}  // namespace dxshim::install
