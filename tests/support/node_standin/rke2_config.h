// rke2's configuration as the rke2 stand-in reads it: a config file and the drop-ins of its `.d`
// folder, merged as k3s pkg/configfilearg does (@2a1e2e8, which rke2 @6ce1a80 pins).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// The items of top-level list KEY (`kubelet-arg`, `node-label+`, ...) of a config.yaml, read line
// by line as our tests write it: a block list (`- "a=b"` / `- a=b` lines, up to the next line that
// is neither an item, a comment nor blank), a flow list `["a=b", c=d]` (on one line or several),
// or a single string; nullopt when KEY is not there. Not a YAML parser: anchors, block scalars,
// multi-line scalars and nested lists are beyond it.
std::optional<std::vector<std::string>> ListItems(const std::string& yaml, const std::string& key);

// The items rke2 ends with for list KEY across FILES (the config file's text first, then each
// drop-in's, in name order): a plain KEY replaces what earlier files gave, `KEY+` appends
// (configfilearg readConfigFile).
std::vector<std::string> MergedList(const std::vector<std::string>& files, const std::string& key);

// kubelet's arguments from rke2's own (name -> value) and the kubelet-arg items, as k3s
// pkg/util/args.go GetArgs makes them: an item `name=value` replaces rke2's value of that name,
// `name+=value` comes after it, `name-=value` before it; an item without `=` is name=true; then
// one --name=value per value, names sorted, a name's values in order.
std::vector<std::string> KubeletArgs(std::vector<std::pair<std::string, std::string>> initial,
                                     const std::vector<std::string>& items);

}  // namespace dxshim::test::node_standin
