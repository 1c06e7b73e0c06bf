// rke2's configuration on Windows, as rke2 reads it (k3s pkg/configfilearg @2a1e2e8, which
// rke2 @6ce1a80 pins): the file its service names with --config (`rke2.exe agent service --add`
// always passes it; default /etc/rancher/rke2/config.yaml, on the system drive), then the
// drop-ins of `<that file>.d` (*.yaml and *.yml, in name order). A key replaces what earlier files
// set for it; a key written with a `+` (kubelet-arg+, node-label+) appends to it. Each kubelet-arg
// item `name=value` becomes kubelet's --name=value (pkg/util/args.go GetArgs: a plain item
// replaces rke2's own default for that flag, `name+=` appends to it, `name-=` puts itself first;
// kubelet keeps a flag's last value). `node-label` items become kubelet's --node-labels, which a
// kubelet-arg `node-labels=` item would replace.
//
// dxshim never edits the operator's files: it adds a drop-in of its own that sorts last
// (kRke2DropIn), with `kubelet-arg+` and `node-label+` items, and removes it on uninstall.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::install {

inline constexpr char kRke2DropIn[] = "zz-dxshim.yaml";

struct Rke2ConfigFile {
  std::string path;
  std::string text;
};

// The kubelet-arg items rke2 gathers from `files` (the config file first, then the drop-ins in
// name order). Throws EditError naming the file that does not parse, or whose kubelet-arg is
// neither a string nor a list of strings.
std::vector<std::string> Rke2KubeletArgs(const std::vector<Rke2ConfigFile>& files);

// The value kubelet ends with for flag `name` (without dashes; `_` and `-` alike) from `items`
// by GetArgs; nullopt when no item names it (rke2's own default then applies).
std::optional<std::string> Rke2KubeletFlag(const std::vector<std::string>& items,
                                           std::string_view name);

// A top-level string setting (node-name) as rke2 ends with it: the last file that sets it.
std::optional<std::string> Rke2Setting(const std::vector<Rke2ConfigFile>& files,
                                       std::string_view key);

// dxshim's drop-in: `kubelet-arg+` with `kubelet_args` (name=value) and `node-label+` with
// `node_labels` (key=value); a key without items is left out.
std::string Rke2DropInText(const std::vector<std::string>& kubelet_args,
                           const std::vector<std::string>& node_labels);

}  // namespace dxshim::install
