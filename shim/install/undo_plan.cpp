#include "shim/install/undo_plan.h"

#include <algorithm>
#include <cctype>

#include "shim/base/ascii_case.h"
#include "shim/install/edit/kubelet_flag_restore.h"

namespace dxshim::install {
namespace {

// A value install changed: what it held before install, and every value install wrote there.
struct Target {
  NodeChange original;
  std::vector<std::string> written;
};

bool SameTarget(const NodeChange& a, const NodeChange& b) {
  return a.kind == b.kind && EqualsIgnoreCase(a.target, b.target) && a.name == b.name;
}

std::vector<Target> TargetsOf(const InstallJournal& journal, bool whole) {
  std::vector<Target> targets;
  const auto add = [&targets](const NodeChange& change) {
    auto it = std::find_if(targets.begin(), targets.end(),
                           [&](const Target& t) { return SameTarget(t.original, change); });
    if (it == targets.end()) it = targets.insert(targets.end(), Target{change, {}});
    it->written.push_back(change.after);
  };
  if (whole) std::for_each(journal.changes.begin(), journal.changes.end(), add);
  if (journal.procedure && journal.procedure->kind == Procedure::Kind::kInstall) {
    for (const Step& step : journal.procedure->steps) {
      if (step.kind == Step::Kind::kWrite && step.state != Step::State::kPending) add(step.change);
    }
  }
  return targets;
}

// Where the value a change names keeps kubelet's flags; nullopt for a value that holds none.
std::optional<FlagHolder> FlagHolderOf(const NodeChange& change) {
  switch (change.kind) {
    case NodeChange::Kind::kFile:
      return FlagHolder::kKubeadmFlagsFile;
    case NodeChange::Kind::kRegistry:  // NSSM's AppParameters: arguments only
      return FlagHolder::kArguments;
    case NodeChange::Kind::kServiceCommandLine:
      return FlagHolder::kServiceCommandLine;
    default:
      return std::nullopt;
  }
}

// The kubelet flags install sets.
constexpr std::string_view kFlagsInstallSets[] = {"container-runtime-endpoint", "node-labels"};

// Adds what restoring `t` needs to `undo` (a write, a note or a refusal).
void Resolve(NodeSystem& node, const Target& t, const std::string& dxshim, Undo& undo) {
  const auto holder = FlagHolderOf(t.original);
  const auto now = CurrentValue(node, t.original);
  if (now == t.original.before) return;
  const auto restore = [&](const std::optional<std::string>& value) {
    Step step;
    step.change = t.original;
    step.change.before = now;
    step.change.after = value.value_or("");
    step.remove = !value;
    undo.plan.writes.push_back(step);
  };
  if (now && std::find(t.written.begin(), t.written.end(), *now) != t.written.end()) {
    restore(t.original.before);
    return;
  }
  const std::string what = t.original.Describe();
  if (!now) {
    undo.refusals.push_back(what + " is gone since install");
    return;
  }
  if (t.original.kind == NodeChange::Kind::kServiceDependencies) {
    const std::string joined = WithoutDependency(*now, dxshim);
    undo.notes.push_back(what + " changed since install (" + *now + "): " +
                         (joined == *now ? "it no longer names " + dxshim + ", left as it is"
                                         : "only " + dxshim + " is taken out"));
    if (joined != *now) restore(joined);
    return;
  }
  const FlagRestore flags =
      holder && t.original.before
          ? RestoreFlags(*holder, *t.original.before, t.written.back(), *now, kFlagsInstallSets)
          : FlagRestore{};
  switch (flags.kind) {
    case FlagRestore::Kind::kPutBack:
      undo.notes.push_back(what +
                           " changed since install: only the kubelet flags dxshim set are "
                           "put back, the rest is left as it is now");
      restore(flags.value);
      return;
    case FlagRestore::Kind::kNoneLeft:
      undo.notes.push_back(what +
                           " changed since install and no longer has the kubelet flags dxshim "
                           "set: left as it is now");
      return;
    case FlagRestore::Kind::kCannot:
      undo.refusals.push_back(what + " changed since install (by hand or by the distribution)");
      return;
  }
}

}  // namespace

Undo PlanUndo(NodeSystem& node, const InstallJournal& journal, bool whole) {
  Undo undo;
  UndoPlan& plan = undo.plan;
  plan.mode = journal.mode;
  plan.kubelet_service = journal.kubelet_service;
  plan.containerd_service = journal.containerd_service;
  plan.dxshim_service = journal.dxshim_service;
  plan.kubelet_pipe_before = journal.kubelet_pipe_before;
  plan.dxshim_was_running = journal.dxshim_was_running;
  plan.delete_service = whole && journal.created_service;
  if (journal.procedure && journal.procedure->creates_service) {
    for (const Step& step : journal.procedure->steps) {
      plan.delete_service = plan.delete_service || (step.kind == Step::Kind::kCreateService &&
                                                    step.state != Step::State::kPending);
    }
  }
  if (const auto kubelet =
          journal.kubelet_service.empty() ? std::nullopt : node.Service(journal.kubelet_service)) {
    plan.kubelet_dependencies = kubelet->dependencies;
  }
  for (const Target& t : TargetsOf(journal, whole)) {
    const bool own = EqualsIgnoreCase(t.original.target, journal.dxshim_service);
    if (own && plan.delete_service) continue;  // the service goes, and its settings with it
    const std::size_t writes = plan.writes.size();
    Resolve(node, t, journal.dxshim_service, undo);
    // A value put back that is not dxshim's own nor a dependency: the launcher reads it at start.
    const bool dependencies = t.original.kind == NodeChange::Kind::kServiceDependencies;
    if (plan.writes.size() > writes && !dependencies && !own) plan.restart_launcher = true;
  }
  if (plan.mode == "takeover" && !plan.containerd_service.empty()) {
    const auto containerd = node.Service(plan.containerd_service);
    plan.restart_launcher = plan.restart_launcher || (containerd && !containerd->running);
  }
  return undo;
}

}  // namespace dxshim::install
