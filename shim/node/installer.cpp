#include "shim/node/installer.h"

#include <algorithm>

#include "shim/node/config_file_edit.h"
#include "shim/node/install_record.h"
#include "shim/node/kubelet_launch.h"
#include "shim/node/kubelet_proof.h"

namespace dxshim::node {
namespace {

using std::chrono::milliseconds;
using Say = std::function<void(const std::string&)>;

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool Running(NodeSystem& node, const std::string& name) {
  const auto service = node.Service(name);
  return service && service->running;
}

void WaitForPipe(NodeSystem& node, const std::string& pipe, const std::string& service,
                 milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto state = service.empty() ? std::nullopt : node.Service(service);
    const auto server = node.PipeServer(pipe);
    if (server && (service.empty() || (state && *server == state->pid))) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw NodeError(pipe + " is not served" + (service.empty() ? "" : " by service " + service) +
                      " " + std::to_string(timeout.count() / 1000) + " s after its start");
    }
    node.Sleep(milliseconds(250));
  }
}

// What one switch writes: each change with the value it gets (after on install, before on
// rollback and uninstall), and what happens to the dxshim service.
struct Switch {
  InstallMode mode = InstallMode::kEndpoint;
  std::vector<std::pair<NodeChange, std::optional<std::string>>> values;
  std::string restart;             // kubelet's service (endpoint) or containerd's (takeover)
  std::string kubelet_service;     // whose dependencies change
  std::string containerd_service;  // takeover
  std::string dxshim_pipe;         // served by the dxshim service once it runs, "" to skip
  std::string takeover_pipe;       // where containerd serves in the end (takeover)
  // The dxshim service: created (spec set), deleted, or its command line set.
  std::optional<ServiceSpec> create;
  bool remove = false;
  std::optional<std::string> dxshim_command_line;
  bool restart_dxshim = false;  // its binary was replaced (install.ps1's upgrade)
  std::string dxshim_service = "dxshim";

  bool ChangesValues() const {
    return std::any_of(values.begin(), values.end(), [](const auto& v) {
      return v.first.kind != NodeChange::Kind::kServiceDependencies;
    });
  }

  bool Restarts() const { return dxshim_command_line.has_value() || remove || ChangesValues(); }
};

void WriteValues(NodeSystem& node, const Switch& s, bool dependencies) {
  for (const auto& [change, value] : s.values) {
    if ((change.kind == NodeChange::Kind::kServiceDependencies) == dependencies) {
      WriteValue(node, change, value);
    }
  }
}

void SetUpDxshim(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  if (s.create) {
    say("creating service " + s.create->name + ": " + s.create->command_line);
    node.RegisterService(*s.create);
  } else if (s.dxshim_command_line) {
    node.SetServiceCommandLine(s.dxshim_service, *s.dxshim_command_line);
  }
  if (s.remove) return;
  if (!Running(node, s.dxshim_service)) {
    say("starting service " + s.dxshim_service);
    node.StartAndWait(s.dxshim_service, timeout);
  }
  if (!s.dxshim_pipe.empty()) WaitForPipe(node, s.dxshim_pipe, s.dxshim_service, timeout);
}

void RemoveDxshim(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  if (!s.remove || !node.Service(s.dxshim_service)) return;
  if (Running(node, s.dxshim_service)) node.StopAndWait(s.dxshim_service, timeout);
  say("deleting service " + s.dxshim_service);
  node.UnregisterService(s.dxshim_service);
}

// Endpoint mode: kubelet's service stops, the values change, dxshim runs, kubelet starts (also
// when it was stopped before: the proof needs it running).
void RunEndpointSwitch(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  const bool restart = s.Restarts() && !s.restart.empty() && node.Service(s.restart).has_value();
  if (restart && Running(node, s.restart)) {
    say("stopping service " + s.restart);
    node.StopAndWait(s.restart, timeout);
  }
  if ((s.dxshim_command_line || s.restart_dxshim) && Running(node, s.dxshim_service)) {
    node.StopAndWait(s.dxshim_service, timeout);
  }
  WriteValues(node, s, false);
  WriteValues(node, s, true);
  SetUpDxshim(node, s, timeout, say);
  if (restart) {
    say("starting service " + s.restart);
    node.StartAndWait(s.restart, timeout);
  }
  RemoveDxshim(node, s, timeout, say);
}

// Takeover: kubelet keeps running. Its service must not depend on what stops meanwhile (the
// service manager refuses to stop a service whose dependents run), so its dependencies are
// narrowed first and written last.
void RunTakeoverSwitch(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  if (!s.Restarts()) {
    WriteValues(node, s, true);
    SetUpDxshim(node, s, timeout, say);
    return;
  }
  if (const auto kubelet = node.Service(s.kubelet_service)) {
    std::vector<std::string> narrowed;
    for (const auto& d : kubelet->dependencies) {
      if (Lower(d) != Lower(s.containerd_service) && Lower(d) != Lower(s.dxshim_service)) {
        narrowed.push_back(d);
      }
    }
    if (narrowed != kubelet->dependencies) node.SetServiceDependencies(s.kubelet_service, narrowed);
  }
  if (Running(node, s.dxshim_service)) {
    say("stopping service " + s.dxshim_service);
    node.StopAndWait(s.dxshim_service, timeout);
  }
  if (Running(node, s.containerd_service)) {
    say("stopping service " + s.containerd_service + " (its shims keep the containers running)");
    node.StopAndWait(s.containerd_service, timeout);
  }
  WriteValues(node, s, false);
  say("starting service " + s.containerd_service);
  node.StartAndWait(s.containerd_service, timeout);
  if (!s.takeover_pipe.empty()) WaitForPipe(node, s.takeover_pipe, "", timeout);
  SetUpDxshim(node, s, timeout, say);
  RemoveDxshim(node, s, timeout, say);
  WriteValues(node, s, true);
}

// Restarts the dxshim service alone, kubelet's keeps running (its gRPC channel reconnects to the
// same pipe). The service manager refuses to stop a service whose dependents run, so kubelet's
// service stops depending on dxshim's for that moment.
void RestartDxshimAlone(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  const auto kubelet = node.Service(s.kubelet_service);
  std::vector<std::string> narrowed;
  if (kubelet) {
    for (const auto& d : kubelet->dependencies) {
      if (Lower(d) != Lower(s.dxshim_service)) narrowed.push_back(d);
    }
  }
  const bool narrow = kubelet && narrowed != kubelet->dependencies;
  if (narrow) node.SetServiceDependencies(s.kubelet_service, narrowed);
  try {
    if (Running(node, s.dxshim_service)) {
      say("restarting service " + s.dxshim_service + " alone (kubelet keeps running)");
      node.StopAndWait(s.dxshim_service, timeout);
    }
    if (s.dxshim_command_line) node.SetServiceCommandLine(s.dxshim_service, *s.dxshim_command_line);
    node.StartAndWait(s.dxshim_service, timeout);
    if (!s.dxshim_pipe.empty()) WaitForPipe(node, s.dxshim_pipe, s.dxshim_service, timeout);
  } catch (...) {
    if (narrow) node.SetServiceDependencies(s.kubelet_service, kubelet->dependencies);
    throw;
  }
  if (narrow) node.SetServiceDependencies(s.kubelet_service, kubelet->dependencies);
}

void RunSwitch(NodeSystem& node, const Switch& s, milliseconds timeout, const Say& say) {
  // Only dxshim's own command line or binary changed: neither kubelet nor containerd restarts.
  if (!s.ChangesValues() && !s.create && !s.remove && (s.dxshim_command_line || s.restart_dxshim) &&
      node.Service(s.dxshim_service)) {
    RestartDxshimAlone(node, s, timeout, say);
    WriteValues(node, s, true);
    return;
  }
  if (s.mode == InstallMode::kTakeover) {
    RunTakeoverSwitch(node, s, timeout, say);
  } else {
    RunEndpointSwitch(node, s, timeout, say);
  }
}

std::string MetricsAddress(NodeSystem& node, const std::string& dxshim_config) {
  const auto text = node.ReadFile(dxshim_config);
  if (!text) return "";
  try {
    const auto value = ReadTopLevelString(*text, "metrics-listen");
    return value && *value != "none" ? *value : "";
  } catch (const std::exception&) {
    return "";
  }
}

// The record says what to write where, as SYSTEM: one that a user could have made is refused.
std::optional<InstallRecord> ReadRecord(NodeSystem& node, const std::string& path) {
  const auto text = node.ReadFile(path);
  if (!text) return std::nullopt;
  if (const auto why = node.UntrustedOwner(path); !why.empty()) {
    throw NodeError("the install record " + path + " is " + why +
                    ", not by SYSTEM or Administrators: it is not trusted (whoever wrote it could "
                    "make dxshim write any file); check it and remove it");
  }
  return ReadInstallRecord(*text);
}

void SayLaunch(const KubeletLaunch& launch, const Say& say) {
  for (const auto& step : launch.chain) say("  " + step);
  if (launch.launcher == Launcher::kUnknown) return;
  const auto& endpoint = launch.runtime_endpoint;
  say("kubelet's launcher: " + std::string(LauncherName(launch.launcher)) + "; runtime endpoint " +
      endpoint.value + " (" + std::string(SettingPlaceName(endpoint.place)) +
      (endpoint.path.empty() ? "" : ", " + endpoint.path) + ")");
  if (launch.hostname_override) say("node name: " + launch.hostname_override->value);
}

// The node's name as kubelet registers it: --hostname-override when set (EKS and GKE set it),
// else the host name, lower case.
std::string NodeName(NodeSystem& node, const KubeletLaunch& launch) {
  if (launch.hostname_override && !launch.hostname_override->value.empty()) {
    return launch.hostname_override->value;
  }
  return Lower(node.ExpandEnvironment("%COMPUTERNAME%"));
}

void SayLabels(NodeSystem& node, const KubeletLaunch& launch,
               const std::vector<std::string>& labels, const Say& say) {
  if (labels.empty()) return;
  std::string list;
  for (const auto& label : labels) list += " " + label;
  say("kubelet applies --node-labels when it registers the node; a node already registered gets "
      "the GPU labels with: kubectl label node " +
      NodeName(node, launch) + " --overwrite" + list);
}

}  // namespace

int Install(NodeSystem& node, const InstallOptions& o) {
  const Say say = o.say ? o.say : [](const std::string&) {};
  KubeletLaunch launch;
  InstallPlan plan;
  std::optional<InstallRecord> recorded;
  try {
    try {
      launch = FindKubeletLaunch(node);
    } catch (const NodeError& e) {
      if (!o.service_only) throw;
      // The service alone does not depend on kubelet's launcher.
      say(std::string("warning: kubelet's launcher could not be read: ") + e.what());
      launch.containerd_service = "containerd";
    }
    SayLaunch(launch, say);
    if (!o.service_only) {
      if (launch.launcher == Launcher::kUnknown) {
        say("kubelet's launcher is unknown: " + launch.why_unknown + ". Nothing changed.");
        say(ManualSteps(o.plan));
        return kUnknownLauncher;
      }
      plan = PlanInstall(node, launch, ChooseMode(launch, o.mode), o.plan);
    }
    recorded = ReadRecord(node, o.record_path);
  } catch (const NodeError& e) {
    say(std::string("install refused: ") + e.what());
    return kFailed;
  }
  if (recorded && !o.service_only && !recorded->changes.empty() &&
      recorded->mode != InstallModeName(plan.mode) && recorded->mode != "service-only") {
    say("install refused: this node was installed in " + recorded->mode + " mode (" +
        o.record_path + "); run `dxshim uninstall` first");
    return kFailed;
  }
  const auto service = node.Service(o.plan.service);
  Switch s;
  s.mode = plan.mode;
  s.restart = plan.restart;
  s.kubelet_service = launch.service;
  s.containerd_service = launch.containerd_service;
  s.dxshim_service = o.plan.service;
  s.dxshim_pipe = plan.mode == InstallMode::kTakeover ? PipePathOf(plan.dxshim_listen)
                                                      : PipePathOf(o.plan.dxshim_endpoint);
  if (plan.mode == InstallMode::kTakeover) s.takeover_pipe = Lower(o.plan.takeover_pipe);
  NodeChange command_change;
  command_change.kind = NodeChange::Kind::kServiceCommandLine;
  command_change.target = o.plan.service;
  if (!service) {
    std::vector<std::string> dependencies;
    if (launch.containerd_service == "containerd" && node.Service("containerd")) {
      dependencies.emplace_back("containerd");
    }
    s.create = ServiceSpec{o.plan.service, "dxshim CRI proxy (GPUs for containers)",
                           o.dxshim_command_line, dependencies};
  } else if (service->command_line != o.dxshim_command_line) {
    s.dxshim_command_line = o.dxshim_command_line;
    command_change.before = service->command_line;
    command_change.after = o.dxshim_command_line;
    command_change.why = "the dxshim service runs the new command line";
  }
  for (const auto& change : plan.changes) s.values.emplace_back(change, change.after);
  s.restart_dxshim = o.restart_service && service && service->running;

  for (const auto& change : plan.changes)
    say("will change " + change.Describe() + ": " + change.why);
  if (s.create) say("will create service " + o.plan.service + ": " + o.dxshim_command_line);
  if (s.dxshim_command_line) say("will change " + command_change.Describe());
  for (const auto& note : plan.notes) say(note);
  const bool anything =
      s.create || s.dxshim_command_line || !plan.changes.empty() || s.restart_dxshim;
  if (!s.ChangesValues() && !s.create && (s.dxshim_command_line || s.restart_dxshim)) {
    say("will restart service " + o.plan.service + " alone");
  } else if (anything && s.Restarts()) {
    say(plan.mode == InstallMode::kTakeover || o.service_only
            ? "will restart " + (o.service_only ? o.plan.service : s.restart) + " only"
            : "will restart service " + s.restart);
  }
  if (o.dry_run) return kInstalled;

  ProofTarget target;
  target.kubelet_endpoint = plan.kubelet_endpoint;
  target.healthz_address = launch.healthz_address;
  target.healthz_port = launch.healthz_port;
  if (plan.mode == InstallMode::kTakeover) {
    target.dxshim_service = o.plan.service;
    target.metrics_address = MetricsAddress(node, o.plan.dxshim_config);
  }
  const auto prove = [&]() -> bool {
    if (o.service_only) return true;
    const auto proof = ProveKubeletUses(node, target, o.proof_timeout);
    say(proof.ok ? "proof: " + proof.what : "no proof: " + proof.what);
    return proof.ok;
  };

  if (!anything) {
    say("nothing to change: no service restarted");
    try {
      if (!Running(node, o.plan.service)) {
        say("starting service " + o.plan.service);
        node.StartAndWait(o.plan.service, o.service_timeout);
      }
    } catch (const NodeError& e) {
      say(std::string("install failed: ") + e.what());
      return kFailed;
    }
    return prove() ? kInstalled : kFailed;
  }

  // The record first: whatever happens next, uninstall knows what to undo.
  const auto previous_record = node.ReadFile(o.record_path);
  InstallRecord record = recorded.value_or(InstallRecord{});
  record.mode = o.service_only ? (recorded ? recorded->mode : "service-only")
                               : std::string(InstallModeName(plan.mode));
  record.launcher = std::string(LauncherName(launch.launcher));
  if (!o.service_only) record.restart = plan.restart;
  if (!launch.service.empty()) record.kubelet_service = launch.service;
  record.containerd_service = launch.containerd_service;
  record.created_service = record.created_service || s.create.has_value();
  record.Merge(plan.changes);
  if (s.dxshim_command_line) record.Merge({command_change});
  try {
    node.WriteFile(o.record_path, WriteInstallRecord(record));
  } catch (const NodeError& e) {
    say(std::string("install refused: cannot write the install record: ") + e.what());
    return kFailed;
  }

  std::string failure;
  try {
    if (o.service_only) {
      s.values.clear();
      RunEndpointSwitch(node, s, o.service_timeout, say);
      say("installed the " + o.plan.service + " service; kubelet and containerd are untouched");
      return kInstalled;
    }
    RunSwitch(node, s, o.service_timeout, say);
    if (prove()) {
      SayLabels(node, launch, o.plan.node_labels, say);
      say("installed: kubelet talks to containerd through dxshim");
      return kInstalled;
    }
    failure = "kubelet is not proven to use dxshim";
  } catch (const std::exception& e) {
    failure = e.what();
  }
  say("install failed: " + failure + " -- rolling back");
  Switch back = s;
  back.values.clear();
  for (auto it = plan.changes.rbegin(); it != plan.changes.rend(); ++it) {
    back.values.emplace_back(*it, it->before);
  }
  back.create.reset();
  back.restart_dxshim = false;
  back.remove = s.create.has_value();
  back.dxshim_command_line = s.dxshim_command_line ? command_change.before : std::nullopt;
  back.takeover_pipe.clear();
  back.dxshim_pipe.clear();
  try {
    RunSwitch(node, back, o.service_timeout, say);
    if (previous_record) {
      node.WriteFile(o.record_path, *previous_record);
    } else {
      node.RemoveFile(o.record_path);
    }
    say("rolled back: the node is as it was before this install");
  } catch (const std::exception& e) {
    say(std::string("ROLLBACK FAILED: ") + e.what() + "; the record " + o.record_path +
        " says what install changed");
  }
  return kFailed;
}

int Uninstall(NodeSystem& node, const UninstallOptions& o) {
  const Say say = o.say ? o.say : [](const std::string&) {};
  std::optional<InstallRecord> record;
  try {
    record = ReadRecord(node, o.record_path);
  } catch (const NodeError& e) {
    say(std::string("uninstall refused: ") + e.what());
    return kFailed;
  }
  if (!record) {
    say("no install record at " + o.record_path +
        ": nothing changed. If kubelet's service still "
        "depends on " +
        o.service +
        ", remove that first (sc.exe qc kubelet shows its "
        "dependencies; sc.exe config kubelet depend= <the others>), then point kubelet back at "
        "containerd and delete the service (sc.exe delete " +
        o.service + ").");
    return kFailed;
  }
  std::vector<std::string> tampered;
  for (const auto& change : record->changes) {
    const auto now = CurrentValue(node, change);
    if (!now || *now != change.after) tampered.push_back(change.Describe());
  }
  if (!tampered.empty()) {
    std::string list;
    for (const auto& t : tampered) list += "\n  " + t;
    say("uninstall refused, nothing changed: these no longer hold what install wrote (changed "
        "since, by hand or by the distribution); restore them or edit " +
        o.record_path + ":" + list);
    return kFailed;
  }
  Switch s;
  s.mode = record->mode == "takeover" ? InstallMode::kTakeover : InstallMode::kEndpoint;
  s.restart = record->restart;
  s.kubelet_service = record->kubelet_service;
  s.containerd_service = record->containerd_service;
  s.dxshim_service = o.service;
  s.remove = record->created_service;
  for (auto it = record->changes.rbegin(); it != record->changes.rend(); ++it) {
    if (it->kind == NodeChange::Kind::kServiceCommandLine && it->target == o.service) {
      if (!s.remove) s.dxshim_command_line = it->before;
      continue;
    }
    s.values.emplace_back(*it, it->before);
    say("restoring " + it->Describe());
  }
  try {
    RunSwitch(node, s, o.service_timeout, say);
    node.RemoveFile(o.record_path);
  } catch (const std::exception& e) {
    say(std::string("uninstall failed: ") + e.what() + "; the record " + o.record_path +
        " is kept");
    return kFailed;
  }
  if (!s.restart.empty() && s.restart == s.kubelet_service && s.Restarts()) {
    ProofTarget target;
    try {
      const auto launch = FindKubeletLaunch(node);
      target.healthz_address = launch.healthz_address;
      target.healthz_port = launch.healthz_port;
    } catch (const NodeError& e) {
      say(std::string("warning: ") + e.what());
    }
    const auto deadline = std::chrono::steady_clock::now() + o.proof_timeout;
    auto health = KubeletHealthy(node, target);
    while (!health.ok && std::chrono::steady_clock::now() < deadline) {
      node.Sleep(milliseconds(1000));
      health = KubeletHealthy(node, target);
    }
    say(health.ok ? "kubelet: " + health.what : "warning: " + health.what);
  }
  say("uninstalled: kubelet talks to containerd directly again");
  return kInstalled;
}

}  // namespace dxshim::node
