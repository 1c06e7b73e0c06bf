#include "shim/install/install_plan.h"

#include <algorithm>
#include <functional>

#include "shim/base/ascii_case.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/containerd_config.h"
#include "shim/install/edit/kubelet_flags.h"
#include "shim/install/edit/rke2_config.h"

namespace dxshim::install {
namespace {

// containerd's default configuration file on Windows (`containerd --help`: --config defaults to
// %ProgramFiles%\containerd\config.toml).
constexpr char kContainerdConfig[] = "C:\\Program Files\\containerd\\config.toml";

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

// Sets kubelet flag `name` where this launcher keeps kubelet's flags.
void SetLauncherFlag(Draft& draft, const KubeletLaunch& launch, const std::string& name,
                     const std::string& value, const std::string& why) {
  switch (launch.launcher) {
    case Launcher::kNativeService:
      draft.Edit(NodeChange::Kind::kServiceCommandLine, launch.service, "", why,
                 [&](const std::string& line) {
                   // The flags follow kubelet.exe's word, counted in the line as stored.
                   const auto first = KubeletFlagsStart(SplitCommandLine(line));
                   if (!first) {
                     throw NodeError("service " + launch.service +
                                     "'s command line does not name kubelet.exe: " + line);
                   }
                   return SetFlag(line, name, value, *first);
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
    case Launcher::kRke2:  // PlanRke2
    case Launcher::kNssmAksScript:
    case Launcher::kUnknown:
      break;
  }
  throw NodeError("kubelet's flags cannot be changed where " +
                  std::string(LauncherName(launch.launcher)) + " keeps them");
}

// rke2: a drop-in of dxshim's own, read after the operator's files, appends the endpoint to
// kubelet-arg and the GPU labels to node-label (rke2_config.h).
void PlanRke2(Draft& draft, const KubeletLaunch& launch, const PlanOptions& options) {
  const std::vector<std::string> args = {"container-runtime-endpoint=" + options.dxshim_endpoint};
  draft.Edit(NodeChange::Kind::kFile, launch.flags_path + ".d\\" + kRke2DropIn, "",
             "rke2 gives kubelet the runtime endpoint " + options.dxshim_endpoint +
                 (options.node_labels.empty() ? "" : " and the GPU labels"),
             [&](const std::string&) { return Rke2DropInText(args, options.node_labels); });
}

// kubeadm 1.34 and later write config.yaml again at `kubeadm upgrade node`, its
// containerRuntimeEndpoint taken from instance-config.yaml: that file gets dxshim's endpoint too,
// so an upgrade keeps kubelet on dxshim.
void PlanKubeadmInstanceConfig(NodeSystem& node, Draft& draft, const PlanOptions& options,
                               const std::string& why, InstallPlan& plan) {
  const std::string file = NodePath(node, kKubeadmInstanceConfigPath);
  const auto text = node.ReadFile(file);
  if (!text) return;
  try {
    const auto value = ReadTopLevelString(*text, "containerRuntimeEndpoint");
    if (!value || *value == options.dxshim_endpoint) return;
    draft.Edit(NodeChange::Kind::kFile, file, "", why, [&](const std::string& t) {
      return SetTopLevelString(t, "containerRuntimeEndpoint", options.dxshim_endpoint);
    });
  } catch (const EditError& e) {
    throw NodeError(file + ": " + e.what());
  }
  plan.notes.push_back(file +
                       " gets the same endpoint: kubeadm writes it into config.yaml again at "
                       "`kubeadm upgrade node`, so an upgrade keeps dxshim");
}

void PlanEndpoint(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                  const PlanOptions& options, InstallPlan& plan) {
  const auto& endpoint = launch.runtime_endpoint;
  const std::string why = "kubelet's runtime endpoint: " + options.dxshim_endpoint;
  if (launch.launcher == Launcher::kRke2) {
    PlanRke2(draft, launch, options);
    plan.kubelet_endpoint = options.dxshim_endpoint;
    plan.kubelet_pipe_before = PipePathOf(endpoint.value);
    plan.kubelet_pipe = plan.dxshim_pipe = PipePathOf(options.dxshim_endpoint);
    return;
  }
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
  // join) would take containerd's endpoint back from it, or, with no endpoint there (kubeadm 1.34
  // and later), from kubelet's configuration: each that names one gets the same value.
  if (launch.launcher == Launcher::kNativeService &&
      endpoint.place == SettingPlace::kServiceCommandLine && launch.config_endpoint &&
      launch.config_endpoint->value != options.dxshim_endpoint) {
    draft.Edit(NodeChange::Kind::kFile, launch.config_endpoint->path, "", why,
               [&](const std::string& text) {
                 return SetTopLevelString(text, "containerRuntimeEndpoint",
                                          options.dxshim_endpoint);
               });
    plan.notes.push_back(launch.config_endpoint->path +
                         " gets the same endpoint: a kubelet started again without the flag "
                         "(a service rebuilt by image-builder's RestartKubelet.ps1) keeps dxshim");
  }
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
  PlanKubeadmInstanceConfig(node, draft, options, why, plan);
  plan.kubelet_endpoint = options.dxshim_endpoint;
  plan.kubelet_pipe_before = PipePathOf(endpoint.value);
  plan.kubelet_pipe = plan.dxshim_pipe = PipePathOf(options.dxshim_endpoint);
}

// kubelet's --node-labels gets the GPU labels where its launcher keeps its flags.
void PlanLabels(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                const PlanOptions& options, InstallPlan& plan) {
  if (options.node_labels.empty() || launch.launcher == Launcher::kRke2) return;
  const std::string current = launch.node_labels ? launch.node_labels->value : "";
  const std::string merged = MergeNodeLabels(current, options.node_labels);
  if (merged == current) return;
  if (launch.launcher == Launcher::kNssmAksScript) {
    plan.notes.push_back("the GPU labels are not added to kubelet's flags (" + launch.script +
                         " owns them): label the node with kubectl");
    return;
  }
  SetLauncherFlag(draft, launch, "node-labels", merged, "kubelet's --node-labels: " + merged);
  // A service rebuilt from kubeadm's flags file keeps them too (as the endpoint, PlanEndpoint).
  if (launch.launcher != Launcher::kNativeService) return;
  const std::string flags_file = NodePath(node, kKubeadmFlagsPath);
  const auto text = node.ReadFile(flags_file);
  const auto flags = text ? ReadKubeadmFlags(*text) : std::nullopt;
  if (!flags) return;
  const auto in_file = FindFlag(SplitKubeadmArgs(flags->args), "node-labels");
  const std::string labels = MergeNodeLabels(in_file ? in_file->value : "", options.node_labels);
  draft.Edit(NodeChange::Kind::kFile, flags_file, "", "kubelet's --node-labels: " + labels,
             [&](const std::string& t) { return SetKubeadmFlag(t, "node-labels", labels); });
}

// Kubelet's service starts after dxshim's (rke2's service, which runs kubelet, likewise).
void PlanDependency(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                    const PlanOptions& options) {
  const auto service = node.Service(launch.service);
  if (!service) return;
  auto dependencies = service->dependencies;
  const bool has = std::any_of(dependencies.begin(), dependencies.end(), [&](const std::string& d) {
    return ToLowerAscii(d) == ToLowerAscii(options.service);
  });
  if (has) return;
  dependencies.push_back(options.service);
  draft.Edit(NodeChange::Kind::kServiceDependencies, launch.service, "",
             "service " + launch.service + " starts after " + options.service,
             [&](const std::string&) { return JoinDependencies(dependencies); });
}

// containerd's --config: on its service's command line, or (containerd under NSSM, as on AKS:
// AgentBaker containerdfunc.ps1) in NSSM's AppParameters; else containerd's default.
std::string ContainerdConfigPath(NodeSystem& node, const PlanOptions& options) {
  if (!options.containerd_config.empty()) return options.containerd_config;
  if (const auto service = node.Service("containerd")) {
    auto words = SplitCommandLine(node.ExpandEnvironment(service->command_line));
    if (!words.empty() && FileNameOf(words[0].text) == "nssm.exe") {
      const auto parameters = node.ReadRegistry(
          "SYSTEM\\CurrentControlSet\\Services\\containerd\\Parameters", "AppParameters");
      words = SplitCommandLine("containerd.exe " +
                               (parameters ? node.ExpandEnvironment(parameters->data) : ""));
    }
    if (const auto config = FindFlag(words, "config", 1)) return NodePath(node, config->value);
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
  const std::string served = ToLowerAscii(ServedPipes(*text).grpc);
  const std::string moved = ToLowerAscii(options.takeover_pipe);
  if (served != kubelet_pipe && served != moved) {
    throw NodeError("kubelet uses " + launch.runtime_endpoint.value + " but containerd serves " +
                    served + " (" + config + "): nothing to take over");
  }
  draft.Edit(NodeChange::Kind::kFile, config, "",
             "containerd's pipe moves to " + options.takeover_pipe +
                 "; its TTRPC pipe, where running shims publish their events, stays " +
                 ServedPipes(*text).ttrpc,
             [&](const std::string& t) { return MoveGrpcKeepTtrpc(t, options.takeover_pipe); });
  plan.dxshim_pipe = kubelet_pipe;
  const std::string listen = PipeEndpoint(kubelet_pipe);
  draft.Edit(NodeChange::Kind::kFile, options.dxshim_config, "",
             "dxshim serves " + listen + " and relays to " + options.takeover_pipe,
             [&](const std::string& t) {
               return SetTopLevelString(SetTopLevelString(t, "listen", listen), "runtime",
                                        PipeEndpoint(options.takeover_pipe));
             });
  // dxshim starts while containerd still serves the pipe and waits for it: the service manager
  // would refuse to stop containerd while a service that depends on it runs.
  if (const auto dxshim = node.Service(options.service)) {
    std::vector<std::string> kept;
    for (const auto& d : dxshim->dependencies) {
      if (ToLowerAscii(d) != ToLowerAscii(launch.containerd_service)) kept.push_back(d);
    }
    if (kept != dxshim->dependencies) {
      draft.Edit(NodeChange::Kind::kServiceDependencies, options.service, "",
                 "service " + options.service + " no longer waits for " +
                     launch.containerd_service + " (it waits for the pipe)",
                 [&](const std::string&) { return JoinDependencies(kept); });
    }
  }
  plan.kubelet_endpoint = launch.runtime_endpoint.value;
  plan.kubelet_pipe_before = plan.kubelet_pipe = kubelet_pipe;
  plan.moved_pipe = moved;
  plan.taken_over = served == moved;
  plan.notes.push_back("kubelet keeps " + launch.runtime_endpoint.value +
                       " and is not restarted; ctr, crictl and the node's scripts reach containerd "
                       "there through dxshim, which relays every call unchanged");
}

// The dxshim service: created when there is none; its command line changed when it differs; and
// whether it must restart (a new command line, or a replaced binary, while it runs).
void PlanDxshimService(NodeSystem& node, Draft& draft, const KubeletLaunch& launch,
                       const PlanOptions& options, InstallPlan& plan) {
  plan.dxshim_service = options.service;
  const auto service = node.Service(options.service);
  if (!service) {
    std::vector<std::string> dependencies;
    if (plan.mode != InstallMode::kTakeover && launch.containerd_service == "containerd" &&
        node.Service("containerd")) {
      dependencies.emplace_back("containerd");
    }
    plan.create_dxshim = ServiceSpec{options.service, "dxshim CRI proxy (GPUs for containers)",
                                     options.dxshim_command_line, dependencies};
    return;
  }
  plan.dxshim_running = service->running;
  if (service->command_line != options.dxshim_command_line) {
    draft.Edit(NodeChange::Kind::kServiceCommandLine, options.service, "",
               "the dxshim service runs the new command line",
               [&](const std::string&) { return options.dxshim_command_line; });
    plan.restart_dxshim = service->running;
  }
  plan.restart_dxshim = plan.restart_dxshim || (options.replaced_binary && service->running);
}

}  // namespace

std::string_view InstallModeName(InstallMode mode) {
  switch (mode) {
    case InstallMode::kTakeover:
      return "takeover";
    case InstallMode::kServiceOnly:
      return "service-only";
    case InstallMode::kEndpoint:
      break;
  }
  return "endpoint";
}

bool InstallPlan::RestartsLauncher() const {
  return std::any_of(changes.begin(), changes.end(), [this](const NodeChange& c) {
    return c.kind != NodeChange::Kind::kServiceDependencies && c.target != dxshim_service;
  });
}

bool InstallPlan::Empty() const { return changes.empty() && !create_dxshim && !restart_dxshim; }

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
  if (launch.launcher == Launcher::kUnknown && mode != InstallMode::kServiceOnly) {
    throw NodeError("kubelet's launcher is unknown (" + launch.why_unknown +
                    "): nothing changed. " + ManualSteps(options));
  }
  InstallPlan plan;
  plan.mode = mode;
  plan.kubelet_service = launch.service;
  plan.containerd_service = launch.containerd_service;
  if (const auto kubelet = launch.service.empty() ? std::nullopt : node.Service(launch.service)) {
    plan.kubelet_dependencies = kubelet->dependencies;
  }
  Draft draft(node);
  try {
    if (mode == InstallMode::kEndpoint) PlanEndpoint(node, draft, launch, options, plan);
    if (mode == InstallMode::kTakeover) PlanTakeover(node, draft, launch, options, plan);
    if (mode == InstallMode::kServiceOnly) {
      plan.dxshim_pipe = PipePathOf(options.dxshim_endpoint);
    } else {
      PlanLabels(node, draft, launch, options, plan);
      PlanDependency(node, draft, launch, options);
    }
    PlanDxshimService(node, draft, launch, options, plan);
  } catch (const NodeError&) {
    throw;
  } catch (const std::exception& e) {
    throw NodeError(std::string("cannot plan the change safely: ") + e.what() +
                    "; nothing changed");
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
  // kubelet reads --node-labels as a comma list with blanks around each label dropped
  // (k8s.io/component-base/cli/flag MapStringString), as SplitCommaList does.
  std::vector<std::string> kept;
  for (const std::string_view label : SplitCommaList(current)) {
    if (!label.empty() && !label.starts_with(keys::kPrefix)) kept.emplace_back(label);
  }
  kept.insert(kept.end(), labels.begin(), labels.end());
  return JoinCommaList(kept);
}

std::string PipeEndpoint(const std::string& pipe_path) {
  std::string rest = pipe_path;
  while (!rest.empty() && (rest.front() == '\\' || rest.front() == '/')) rest.erase(0, 1);
  std::replace(rest.begin(), rest.end(), '\\', '/');
  return "npipe://" + rest;
}

}  // namespace dxshim::install
