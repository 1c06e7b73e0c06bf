#include "shim/node/undo_plan.h"

#include <algorithm>
#include <cctype>

#include "shim/node/ascii_case.h"
#include "shim/node/command_line.h"
#include "shim/node/kubelet_flags.h"
#include "shim/node/kubelet_launch.h"

namespace dxshim::node {
namespace {

// A value install changed: what it held before install, and every value install wrote there.
struct Target {
  NodeChange original;
  std::vector<std::string> written;
  bool Wrote(const std::string& value) const {
    return std::find(written.begin(), written.end(), value) != written.end();
  }
};

bool SameTarget(const NodeChange& a, const NodeChange& b) {
  return a.kind == b.kind && Lower(a.target) == Lower(b.target) && a.name == b.name;
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

// A kubelet flag list inside a value: where its flags start, and how one is set or removed.
struct FlagList {
  std::vector<Word> words;
  std::size_t first = 0;
  bool kubeadm = false;  // inside kubeadm-flags.env's KUBELET_KUBEADM_ARGS
};

std::optional<FlagList> FlagsIn(const NodeChange& change, const std::string& value) {
  if (change.kind == NodeChange::Kind::kFile) {
    const auto flags = ReadKubeadmFlags(value);
    if (!flags) return std::nullopt;
    return FlagList{SplitKubeadmArgs(flags->args), 0, true};
  }
  if (change.kind != NodeChange::Kind::kServiceCommandLine &&
      change.kind != NodeChange::Kind::kRegistry) {
    return std::nullopt;
  }
  // NSSM's AppParameters hold arguments only; a service's command line starts with its program.
  FlagList list{
      change.kind == NodeChange::Kind::kRegistry ? SplitArguments(value) : SplitCommandLine(value),
      0, false};
  if (change.kind == NodeChange::Kind::kServiceCommandLine) {
    while (list.first < list.words.size() &&
           FileNameOf(list.words[list.first].text) != "kubelet.exe") {
      ++list.first;
    }
    if (list.first == list.words.size()) return std::nullopt;
    ++list.first;
  }
  return list;
}

std::optional<std::string> FlagOf(const FlagList& list, const std::string& name) {
  const auto found = FindFlag(list.words, name, list.first);
  return found ? std::optional(found->value) : std::nullopt;
}

// `now` with every kubelet flag install set (its value in `before` differs from the one install
// wrote) put back where it still holds install's value; nullopt when none does, or when one cannot
// be put back (a flag kubeadm's file did not have: dxshim has no way to remove it there).
std::optional<std::string> FlagsPutBack(const Target& t, const std::string& now) {
  if (!t.original.before) return std::nullopt;
  const auto before = FlagsIn(t.original, *t.original.before);
  const auto after = FlagsIn(t.original, t.written.back());
  auto current = FlagsIn(t.original, now);
  if (!before || !after || !current) return std::nullopt;
  std::string out = now;
  for (const char* name : {"container-runtime-endpoint", "node-labels"}) {
    const auto was = FlagOf(*before, name);
    const auto set = FlagOf(*after, name);
    if (was == set || !set || FlagOf(*current, name) != set) continue;
    if (current->kubeadm) {
      if (!was) return std::nullopt;
      out = SetKubeadmFlag(out, name, *was);
    } else {
      out = was ? SetFlag(out, name, *was, current->first) : RemoveFlag(out, name, current->first);
    }
    current = FlagsIn(t.original, out);
  }
  return out == now ? std::nullopt : std::optional(out);
}

// Whether `now` no longer has any of the kubelet flags install set there (a command line made
// again without them, as image-builder's RestartKubelet.ps1 makes kubelet's service from
// kubeadm-flags.env): nothing of dxshim's is left in it to put back.
bool HoldsNoFlagSet(const Target& t, const std::string& now) {
  if (!t.original.before) return false;
  const auto before = FlagsIn(t.original, *t.original.before);
  const auto after = FlagsIn(t.original, t.written.back());
  const auto current = FlagsIn(t.original, now);
  if (!before || !after || !current) return false;
  bool set_any = false;
  for (const char* name : {"container-runtime-endpoint", "node-labels"}) {
    const auto set = FlagOf(*after, name);
    if (!set || FlagOf(*before, name) == set) continue;
    if (FlagOf(*current, name)) return false;
    set_any = true;
  }
  return set_any;
}

Step Restore(const NodeChange& original, const std::optional<std::string>& now,
             const std::optional<std::string>& value) {
  Step step;
  step.change = original;
  step.change.before = now;
  step.change.after = value.value_or("");
  step.remove = !value;
  return step;
}

// Adds what restoring `t` needs to `undo` (a write, a note or a refusal).
void Resolve(NodeSystem& node, const Target& t, const std::string& dxshim, Undo& undo) {
  const auto now = CurrentValue(node, t.original);
  if (now == t.original.before) return;
  if (now && t.Wrote(*now)) {
    undo.plan.writes.push_back(Restore(t.original, now, t.original.before));
    return;
  }
  const std::string what = t.original.Describe();
  if (!now) {
    undo.refusals.push_back(what + " is gone since install");
    return;
  }
  if (t.original.kind == NodeChange::Kind::kServiceDependencies) {
    auto kept = SplitDependencies(*now);
    std::erase_if(kept, [&](const std::string& d) { return Lower(d) == Lower(dxshim); });
    const std::string joined = JoinDependencies(kept);
    undo.notes.push_back(what + " changed since install (" + *now + "): " +
                         (joined == *now ? "it no longer names " + dxshim + ", left as it is"
                                         : "only " + dxshim + " is taken out"));
    if (joined != *now) undo.plan.writes.push_back(Restore(t.original, now, joined));
    return;
  }
  if (const auto put_back = FlagsPutBack(t, *now)) {
    undo.notes.push_back(what +
                         " changed since install: only the kubelet flags dxshim set are "
                         "put back, the rest is left as it is now");
    undo.plan.writes.push_back(Restore(t.original, now, *put_back));
    return;
  }
  if (HoldsNoFlagSet(t, *now)) {
    undo.notes.push_back(what +
                         " changed since install and no longer has the kubelet flags dxshim set: "
                         "left as it is now");
    return;
  }
  undo.refusals.push_back(what + " changed since install (by hand or by the distribution)");
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
    const bool own = Lower(t.original.target) == Lower(journal.dxshim_service);
    if (own && plan.delete_service) continue;  // the service goes, and its settings with it
    Resolve(node, t, journal.dxshim_service, undo);
  }
  for (const Step& w : plan.writes) {
    const bool dependencies = w.change.kind == NodeChange::Kind::kServiceDependencies;
    const bool own = Lower(w.change.target) == Lower(journal.dxshim_service);
    plan.restart_launcher = plan.restart_launcher || (!dependencies && !own);
  }
  if (plan.mode == "takeover" && !plan.containerd_service.empty()) {
    const auto containerd = node.Service(plan.containerd_service);
    plan.restart_launcher = plan.restart_launcher || (containerd && !containerd->running);
  }
  return undo;
}

}  // namespace dxshim::node
