#include "shim/node/install_plan.h"

#include <algorithm>
#include <functional>

#include "shim/node/command_line.h"
#include "shim/node/config_file_edit.h"
#include "shim/node/containerd_config.h"
#include "shim/node/kubelet_flags.h"
#include "shim/node/rke2_config.h"

namespace dxshim::node {
namespace {

// containerd's default configuration file on Windows (`containerd --help`: --config defaults to
// %ProgramFiles%\containerd\config.toml) and its default pipe.
constexpr char kContainerdConfig[] = "C:\\Program Files\\containerd\\config.toml";
constexpr char kContainerdPipe[] = "\\\\.\\pipe\\containerd-containerd";

// The changes being planned; a second edit of the same target builds on the first.
class Draft {
 public:
  explicit Draft(NodeSystem& node) : node_(node) {}

  void Edit(NodeChange::Kind kind, const std::string& target, const std::string& name,
            const std::string& why, const std::function<std::string(const std::string&)>& edit) {
    auto it = std::find_if(changes_.begin(), changes_.end(), [&](const NodeChange& c) {
      return c.kind == kind && c.target == target && c.name == name;
    });
    if (it == changes_.end()) {
      NodeChange change;
      change.kind = kind;
      change.target = target;
      change.name = name;
      if (kind == NodeChange::Kind::kRegistry) {
        const auto value = node_.ReadRegistry(target, name);
        change.expand = value && value->expand;
      }
      change.before = CurrentValue(node_, change);
      change.after = change.before.value_or("");
      changes_.push_back(change);
      it = changes_.end() - 1;
    }
    it->after = edit(it->after);
    it->why += (it->why.empty() ? "" : "; ") + why;
  }

  std::vector<NodeChange> Real() const {
    std::vector<NodeChange> real;
    for (const auto& c : changes_) {
      if (!c.before || *c.before != c.after) real.push_back(c);
    }
    return real;
  }

 private:
  NodeSystem& node_;
  std::vector<NodeChange> changes_;
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Sets kubelet flag `name` where this launcher keeps kubelet's flags.
void SetLauncherFlag(Draft& draft, const KubeletLaunch& launch, const std::string& name,
                     const std::string& value, const std::string& why) {
  switch (launch.launcher) {
    case Launcher::kNativeService:
      draft.Edit(NodeChange::Kind::kServiceCommandLine, launch.service, "", why,
                 [&](const std::string& line) {
                   // The flags follow kubelet.exe's word, counted in the line as stored.
                   const auto words = SplitCommandLine(line);
                   std::size_t at = 0;
                   while (at < words.size() && FileNameOf(words[at].text) != "kubelet.exe") ++at;
                   if (at == words.size()) {
                     throw NodeError("service " + launch.service +
                                     "'s command line does not name kubelet.exe: " + line);
                   }
                   return SetFlag(line, name, value, at + 1);
                 });
      return;
    case Launcher::kNssmKubelet:
      draft.Edit(NodeChange::Kind::kRegistry, launch.nssm_key, "AppParameters", why,
                 [&](const std::string& args) { return SetFlag(args, name, value, 0); });
      return;
    case Launcher::kNssmKubeadmScript:
      draft.Edit(NodeChange::Kind::kFile, launch.flags_path, "", why,
                 [&](const std::string& text) { return SetKubeadmFlag(text, name, value); });
      return;
    case Launcher::kRke2:
      draft.Edit(NodeChange::Kind::kFile, launch.flags_path, "", why,
                 [&](const std::string& text) { return SetRke2KubeletArg(text, name, value); });
      return;
    case Launcher::kNssmAksScript:
    case Launcher::kUnknown:
      break;
  }
  throw NodeError("kubelet's flags cannot be changed where " +
                  std::string(LauncherName(launch.launcher)) + " keeps them");
}

void PlanEndpoint(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                  const PlanOptions& options, InstallPlan& plan) {
  const auto& endpoint = launch.runtime_endpoint;
  const std::string why = "kubelet's runtime endpoint: " + options.dxshim_endpoint;
  if (endpoint.place == SettingPlace::kScript) {
    throw NodeError(launch.script + " sets kubelet's runtime endpoint itself (" + endpoint.value +
                    ") and the distribution rewrites it: use --mode takeover");
  }
  if (endpoint.place == SettingPlace::kConfigFile ||
      endpoint.place == SettingPlace::kConfigDropIn) {
    draft.Edit(NodeChange::Kind::kFile, endpoint.path, "", why, [&](const std::string& text) {
      return SetTopLevelString(text, "containerRuntimeEndpoint", options.dxshim_endpoint);
    });
  } else {
    SetLauncherFlag(draft, launch, "container-runtime-endpoint", options.dxshim_endpoint, why);
  }
  // A service rebuilt from kubeadm's flags file (image-builder's RestartKubelet.ps1, after each
  // join) would take containerd's endpoint back from it: that file gets the same value.
  if (launch.launcher == Launcher::kNativeService) {
    const std::string flags_file = NodePath(node, kKubeadmFlagsPath);
    const auto text = node.ReadFile(flags_file);
    const auto flags = text ? ReadKubeadmFlags(*text) : std::nullopt;
    if (flags && FindFlag(SplitCommandLine(flags->args), "container-runtime-endpoint")) {
      draft.Edit(NodeChange::Kind::kFile, flags_file, "", why, [&](const std::string& t) {
        return SetKubeadmFlag(t, "container-runtime-endpoint", options.dxshim_endpoint);
      });
      plan.notes.push_back(flags_file +
                           " gets the same endpoint: scripts that rebuild the kubelet "
                           "service from it (image-builder's RestartKubelet.ps1) keep dxshim");
    }
  }
  plan.kubelet_endpoint = options.dxshim_endpoint;
}

std::string ContainerdConfigPath(NodeSystem& node, const PlanOptions& options) {
  if (!options.containerd_config.empty()) return options.containerd_config;
  if (const auto service = node.Service("containerd")) {
    const auto words = SplitCommandLine(node.ExpandEnvironment(service->command_line));
    if (const auto config = FindFlag(words, "config", 1)) return config->value;
  }
  return kContainerdConfig;
}

void PlanTakeover(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                  const PlanOptions& options, InstallPlan& plan) {
  if (launch.launcher == Launcher::kRke2) {
    throw NodeError(
        "rke2 writes containerd's configuration itself at each start: use --mode endpoint");
  }
  const std::string config = ContainerdConfigPath(node, options);
  const auto text = node.ReadFile(config);
  if (!text) {
    throw NodeError("containerd's config file " + config +
                    " does not exist (takeover moves containerd's pipe there): write containerd's "
                    "configuration there first (`containerd config default`)");
  }
  const std::string kubelet_pipe = PipePathOf(launch.runtime_endpoint.value);
  const std::string served = Lower(ReadGrpcAddress(*text).value_or(kContainerdPipe));
  const std::string moved = Lower(options.takeover_pipe);
  if (served != kubelet_pipe && served != moved) {
    throw NodeError("kubelet uses " + launch.runtime_endpoint.value + " but containerd serves " +
                    served + " (" + config + "): nothing to take over");
  }
  draft.Edit(NodeChange::Kind::kFile, config, "",
             "containerd's pipe moves to " + options.takeover_pipe,
             [&](const std::string& t) { return SetGrpcAddress(t, options.takeover_pipe); });
  plan.dxshim_listen = PipeEndpoint(kubelet_pipe);
  draft.Edit(NodeChange::Kind::kFile, options.dxshim_config, "",
             "dxshim serves " + plan.dxshim_listen + " and relays to " + options.takeover_pipe,
             [&](const std::string& t) {
               return SetTopLevelString(SetTopLevelString(t, "listen", plan.dxshim_listen),
                                        "runtime", PipeEndpoint(options.takeover_pipe));
             });
  plan.kubelet_endpoint = launch.runtime_endpoint.value;
  plan.notes.push_back("kubelet keeps " + launch.runtime_endpoint.value +
                       " and is not restarted; ctr, crictl and the node's scripts reach containerd "
                       "there through dxshim, which relays every call unchanged");
}

}  // namespace

std::string_view InstallModeName(InstallMode mode) {
  return mode == InstallMode::kTakeover ? "takeover" : "endpoint";
}

bool InstallPlan::NeedsRestart() const {
  return std::any_of(changes.begin(), changes.end(), [](const NodeChange& c) {
    return c.kind != NodeChange::Kind::kServiceDependencies;
  });
}

InstallMode ChooseMode(const KubeletLaunch& launch, std::string_view name) {
  if (name == "auto") {
    return launch.runtime_endpoint.place == SettingPlace::kScript ? InstallMode::kTakeover
                                                                  : InstallMode::kEndpoint;
  }
  if (name == "endpoint") return InstallMode::kEndpoint;
  if (name == "takeover") return InstallMode::kTakeover;
  throw NodeError("--mode '" + std::string(name) + "' is not auto, endpoint or takeover");
}

InstallPlan PlanInstall(NodeSystem& node, const KubeletLaunch& launch, InstallMode mode,
                        const PlanOptions& options) {
  if (launch.launcher == Launcher::kUnknown) {
    throw NodeError("kubelet's launcher is unknown (" + launch.why_unknown +
                    "): nothing changed. " + ManualSteps(options));
  }
  InstallPlan plan;
  plan.mode = mode;
  Draft draft(node);
  try {
    if (mode == InstallMode::kEndpoint) {
      PlanEndpoint(node, draft, launch, options, plan);
      plan.restart = launch.service;
    } else {
      PlanTakeover(node, draft, launch, options, plan);
      plan.restart = launch.containerd_service;
    }
    if (!options.node_labels.empty()) {
      const std::string current = launch.node_labels ? launch.node_labels->value : "";
      const std::string merged = MergeNodeLabels(current, options.node_labels);
      if (merged != current) {
        if (launch.launcher == Launcher::kNssmAksScript) {
          plan.notes.push_back("the GPU labels are not added to kubelet's flags (" + launch.script +
                               " owns them): label the node with kubectl");
        } else {
          SetLauncherFlag(draft, launch, "node-labels", merged,
                          "kubelet's --node-labels: " + merged);
        }
      }
    }
  } catch (const NodeError&) {
    throw;
  } catch (const std::exception& e) {
    throw NodeError(std::string("cannot plan the change safely: ") + e.what() +
                    "; nothing changed");
  }
  // Kubelet's service starts after dxshim's (rke2's service, which runs kubelet, likewise).
  if (const auto service = node.Service(launch.service)) {
    auto dependencies = service->dependencies;
    const bool has =
        std::any_of(dependencies.begin(), dependencies.end(),
                    [&](const std::string& d) { return Lower(d) == Lower(options.service); });
    if (!has) {
      dependencies.push_back(options.service);
      draft.Edit(NodeChange::Kind::kServiceDependencies, launch.service, "",
                 "service " + launch.service + " starts after " + options.service,
                 [&](const std::string&) { return JoinDependencies(dependencies); });
    }
  }
  plan.changes = draft.Real();
  return plan;
}

std::string ManualSteps(const PlanOptions& options) {
  return "To use dxshim, set kubelet's --container-runtime-endpoint (or containerRuntimeEndpoint "
         "in its --config file) to " +
         options.dxshim_endpoint +
         " where your launcher keeps it, make kubelet's service depend on " + options.service +
         " (sc.exe config kubelet depend= containerd/" + options.service +
         "), and restart kubelet; or run `dxshim install --mode takeover`.";
}

std::string MergeNodeLabels(const std::string& current, const std::vector<std::string>& labels) {
  std::vector<std::string> kept;
  std::size_t start = 0;
  while (start <= current.size()) {
    const auto comma = current.find(',', start);
    const std::string label =
        current.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!label.empty() && label.rfind("dxshim.io/", 0) != 0) kept.push_back(label);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  kept.insert(kept.end(), labels.begin(), labels.end());
  std::string joined;
  for (const auto& label : kept) joined += (joined.empty() ? "" : ",") + label;
  return joined;
}

std::string PipeEndpoint(const std::string& pipe_path) {
  std::string rest = pipe_path;
  while (!rest.empty() && (rest.front() == '\\' || rest.front() == '/')) rest.erase(0, 1);
  std::replace(rest.begin(), rest.end(), '\\', '/');
  return "npipe://" + rest;
}

}  // namespace dxshim::node
