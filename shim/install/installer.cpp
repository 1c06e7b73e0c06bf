#include "shim/install/installer.h"

#include "shim/base/ascii_case.h"
#include "shim/install/install_describe.h"
#include "shim/install/install_procedure.h"
#include "shim/install/journal_file.h"
#include "shim/install/kubelet/other_gpu_plugins.h"
#include "shim/install/procedure_run.h"
#include "shim/install/undo_plan.h"

namespace dxshim::install {
namespace {

void SayAll(const Say& say, const std::vector<std::string>& lines) {
  for (const auto& line : lines) say(line);
}

// check: another GPU device plugin registered with kubelet refuses install (unless allowed),
// before anything changes; a code when install ends here.
std::optional<int> OtherPluginsPhase(ProcedureRun& r, const InstallOptions& o) {
  const std::string dir = r.node.ExpandEnvironment(
      o.device_plugin_dir.empty() ? kWindowsDevicePluginDir : o.device_plugin_dir);
  std::vector<OtherGpuPlugin> found;
  try {
    found = OtherGpuPluginsOn(r.node, dir, o.dxshim_resources);
  } catch (const NodeError& e) {
    r.say(std::string("warning: ") + e.what() +
          "; whether another GPU device plugin is registered is not known");
    return std::nullopt;
  }
  if (found.empty()) return std::nullopt;
  const std::string what = DescribeOtherGpuPlugins(found, o.dxshim_device_plugin);
  if (o.allow_other_gpu_plugin) {
    r.say("warning: " + what + ". Going on: --allow-other-gpu-plugin");
    return std::nullopt;
  }
  r.say("install refused, nothing changed: " + what + ". Fix: " + OtherGpuPluginsFix() +
        ". Or run install again with --allow-other-gpu-plugin to keep both.");
  return kFailed;
}

// plan: kubelet's launcher and every change; a code when install ends here.
std::optional<int> PlanPhase(ProcedureRun& r, const InstallOptions& o,
                             const std::optional<InstallJournal>& journal, KubeletLaunch& launch,
                             InstallPlan& plan) {
  try {
    try {
      launch = FindKubeletLaunch(r.node);
    } catch (const NodeError& e) {
      if (!o.service_only) throw;
      r.say(std::string("warning: kubelet's launcher could not be read: ") + e.what());
    }
    SayAll(r.say, DescribeLaunch(launch));
    if (o.service_only && launch.launcher == Launcher::kNssmAksScript) {
      throw NodeError(launch.script +
                      " writes kubelet's endpoint itself at every start, so no "
                      "bootstrap setting points kubelet at dxshim here: install without "
                      "--service-only (takeover), or run the installer DaemonSet");
    }
    if (!o.service_only && launch.launcher == Launcher::kUnknown) {
      r.say("kubelet's launcher is unknown: " + launch.why_unknown + ". Nothing changed.");
      r.say(ManualSteps(o.plan));
      return kUnknownLauncher;
    }
    const InstallMode mode =
        o.service_only ? InstallMode::kServiceOnly : ChooseMode(launch, o.mode);
    plan = PlanInstall(r.node, launch, mode, o.plan);
    const std::string name(InstallModeName(mode));
    if (journal && !journal->changes.empty() && !o.service_only && journal->mode != name &&
        journal->mode != "service-only") {
      throw NodeError("this node was installed in " + journal->mode + " mode (" + r.path +
                      "); run `dxshim uninstall` first");
    }
  } catch (const NodeError& e) {
    r.say(std::string("install refused: ") + e.what());
    return kFailed;
  }
  return std::nullopt;
}

// journal: the record so far, with this install's steps, saved before any is applied.
InstallJournal JournalPhase(const KubeletLaunch& launch, const InstallPlan& plan,
                            const std::optional<InstallJournal>& journal) {
  InstallJournal j = journal.value_or(InstallJournal{});
  const std::string mode(InstallModeName(plan.mode));
  if (!journal) {
    j.dxshim_was_running = plan.dxshim_running;
    j.kubelet_pipe_before = plan.kubelet_pipe_before;
  }
  if (j.mode.empty() || j.mode == "service-only") j.mode = mode;
  j.launcher = std::string(LauncherName(launch.launcher));
  if (!plan.kubelet_service.empty()) j.kubelet_service = plan.kubelet_service;
  if (!plan.containerd_service.empty()) j.containerd_service = plan.containerd_service;
  j.dxshim_service = plan.dxshim_service;
  if (plan.mode != InstallMode::kServiceOnly || j.kubelet_pipe.empty()) {
    j.kubelet_pipe = plan.mode == InstallMode::kServiceOnly ? plan.dxshim_pipe : plan.kubelet_pipe;
  }
  if (!plan.moved_pipe.empty()) j.moved_pipe = plan.moved_pipe;
  j.procedure = Procedure{Procedure::Kind::kInstall, plan.changes, plan.create_dxshim.has_value(),
                          InstallSteps(plan)};
  return j;
}

// The node's name as kubelet registers it: --hostname-override when set (EKS and GKE set it),
// else the host name, lower case.
std::string NodeName(NodeSystem& node, const KubeletLaunch& launch) {
  if (launch.hostname_override && !launch.hostname_override->value.empty()) {
    return launch.hostname_override->value;
  }
  return ToLowerAscii(node.ExpandEnvironment("%COMPUTERNAME%"));
}

// What an install that succeeded leaves to the operator: the GPU labels of a node kubelet has
// registered already, or (service only) the setting that points kubelet at dxshim at bootstrap.
void SayInstalled(ProcedureRun& r, const InstallOptions& o, const KubeletLaunch& launch,
                  const InstallPlan& plan) {
  if (plan.mode != InstallMode::kServiceOnly) {
    if (!o.plan.node_labels.empty()) {
      r.say(LabelCommand(NodeName(r.node, launch), o.plan.node_labels));
    }
    r.say("installed: kubelet talks to containerd through dxshim");
    return;
  }
  const auto setting = BootstrapSetting(launch, o.plan.dxshim_endpoint);
  r.say("installed the " + plan.dxshim_service + " service; kubelet and containerd are untouched");
  r.say(setting ? "to point kubelet at dxshim at bootstrap, set " + *setting : ManualSteps(o.plan));
}

// uninstall without a journal: what is left to do by hand, if anything.
std::string NothingRecorded(const UninstallOptions& o) {
  return "no install record at " + o.record_path + ": nothing changed. If kubelet's service " +
         "still depends on " + o.service +
         ", remove that first (sc.exe qc kubelet shows its dependencies; sc.exe config kubelet "
         "depend= <the others>), then point kubelet back at containerd and delete the service "
         "(sc.exe delete " +
         o.service + ").";
}

}  // namespace

int Install(NodeSystem& node, DxshimProbe& probe, const InstallOptions& o) {
  ProcedureRun r{node,
                 probe,
                 o.record_path,
                 o.service_timeout,
                 o.proof_timeout,
                 o.say ? o.say : [](const std::string&) {},
                 o.interrupt};
  std::optional<InstallJournal> journal;
  try {
    journal = LoadJournal(node, o.record_path);
  } catch (const NodeError& e) {
    r.say(std::string("install refused: ") + e.what());
    return kFailed;
  }
  // An interrupted run is finished first, whatever registered since: the journal promises it.
  if (journal && journal->procedure && !o.dry_run) {
    if (!CarryOut(r, *journal, Start::kInterrupted)) return kFailed;
    if (journal->Empty()) journal.reset();
  } else if (const auto code = OtherPluginsPhase(r, o)) {
    return *code;
  }
  KubeletLaunch launch;
  InstallPlan plan;
  if (const auto code = PlanPhase(r, o, journal, launch, plan)) return *code;
  InstallJournal j = JournalPhase(launch, plan, journal);
  SayAll(r.say, DescribePlan(plan, j.procedure->steps));
  if (o.dry_run) return kInstalled;
  if (plan.Empty()) r.say("nothing to change: no service restarted");
  if (!CarryOut(r, j, Start::kNew)) return kFailed;
  SayInstalled(r, o, launch, plan);
  return kInstalled;
}

int Uninstall(NodeSystem& node, DxshimProbe& probe, const UninstallOptions& o) {
  ProcedureRun r{node,
                 probe,
                 o.record_path,
                 o.service_timeout,
                 {},
                 o.say ? o.say : [](const std::string&) {},
                 o.interrupt};
  std::optional<InstallJournal> journal;
  try {
    journal = LoadJournal(node, o.record_path);
  } catch (const NodeError& e) {
    r.say(std::string("uninstall refused: ") + e.what());
    return kFailed;
  }
  if (!journal) {
    r.say(NothingRecorded(o));
    return kFailed;
  }
  // An interrupted rollback or uninstall is finished first; an install in progress is undone
  // with the rest.
  if (journal->procedure && journal->procedure->kind != Procedure::Kind::kInstall) {
    if (!CarryOut(r, *journal, Start::kInterrupted)) return kFailed;
  }
  const std::string done = "uninstalled: kubelet talks to containerd directly again";
  Undo undo;
  try {
    if (journal->Empty()) {
      KeepJournal(node, o.record_path, *journal);  // a record of nothing (version 1): removed
      r.say(done);
      return kInstalled;
    }
    undo = PlanUndo(node, *journal, /*whole=*/true);
  } catch (const NodeError& e) {
    r.say(std::string("uninstall refused: ") + e.what());
    return kFailed;
  }
  if (!undo.refusals.empty()) {
    std::string list;
    for (const auto& why : undo.refusals) list += "\n  " + why;
    r.say("uninstall refused, nothing changed: restore these or edit " + r.path + ":" + list);
    return kFailed;
  }
  SayAll(r.say, undo.notes);
  journal->procedure = Procedure{Procedure::Kind::kUninstall, {}, false, UndoSteps(undo.plan)};
  SayAll(r.say, DescribeSteps(journal->procedure->steps));
  if (!CarryOut(r, *journal, Start::kNew)) return kFailed;
  r.say(done);
  return kInstalled;
}

}  // namespace dxshim::install
