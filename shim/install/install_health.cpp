#include "shim/install/install_health.h"

#include <algorithm>
#include <cctype>

#include "shim/base/ascii_case.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/containerd_config.h"
#include "shim/install/journal_file.h"

namespace dxshim::install {
namespace {

using Level = InstallFinding::Level;

std::vector<InstallFinding> Interrupted(const Procedure& p) {
  const auto next = std::find_if(p.steps.begin(), p.steps.end(),
                                 [](const Step& step) { return step.state != Step::State::kDone; });
  return {
      {Level::kFailed,
       DescribeInterrupted(p) + (next == p.steps.end() ? "" : " (next: " + next->Describe() + ")"),
       p.kind == Procedure::Kind::kUninstall
           ? "run `dxshim uninstall` again: it finishes the uninstall"
           : "run `dxshim install` again: it finishes what was begun (or `dxshim uninstall`)"}};
}

// containerd's config.toml as the takeover recorded it: its TTRPC pipe where it was before.
std::vector<InstallFinding> Ttrpc(NodeSystem& node, const InstallJournal& j) {
  for (const auto& c : j.changes) {
    if (c.kind != NodeChange::Kind::kFile || !c.before) continue;
    try {
      if (ToLowerAscii(ServedPipes(c.after).grpc) != ToLowerAscii(j.moved_pipe)) continue;
      const std::string kept = ServedPipes(*c.before).ttrpc;
      const auto now = node.ReadFile(c.target);
      if (!now || ToLowerAscii(ServedPipes(*now).grpc) != ToLowerAscii(j.moved_pipe)) {
        return {{Level::kFailed,
                 "containerd's " + c.target + " no longer moves its pipe to " + j.moved_pipe +
                     " (rewritten since the takeover?)",
                 "run `dxshim install` again"}};
      }
      const std::string ttrpc = ServedPipes(*now).ttrpc;
      if (ToLowerAscii(ttrpc) != ToLowerAscii(kept)) {
        std::string what = "containerd's TTRPC pipe moved from " + kept;
        what += " to ";
        what += ttrpc;
        what += ": the shims started before publish their events (a task's exit among them) to ";
        what += kept;
        what += ", which containerd no longer serves";
        return {{Level::kFailed, what,
                 "set [ttrpc] address back to " + kept + " in " + c.target +
                     " and restart containerd, or run `dxshim install` again"}};
      }
      if (!node.PipeServer(ttrpc)) {
        return {{Level::kFailed, "nothing serves containerd's TTRPC pipe " + ttrpc,
                 "start containerd"}};
      }
      return {{Level::kOk, "containerd's TTRPC pipe stays " + ttrpc + ", served", ""}};
    } catch (const std::exception&) {
      continue;  // not containerd's file
    }
  }
  return {};
}

std::vector<InstallFinding> Dependency(NodeSystem& node, const InstallJournal& j) {
  const auto kubelet = j.kubelet_service.empty() ? std::nullopt : node.Service(j.kubelet_service);
  if (!kubelet) return {};
  const bool recorded = std::any_of(j.changes.begin(), j.changes.end(), [&](const NodeChange& c) {
    return c.kind == NodeChange::Kind::kServiceDependencies &&
           ToLowerAscii(c.target) == ToLowerAscii(j.kubelet_service);
  });
  const bool depends = std::any_of(
      kubelet->dependencies.begin(), kubelet->dependencies.end(),
      [&](const std::string& d) { return ToLowerAscii(d) == ToLowerAscii(j.dxshim_service); });
  if (!recorded || depends) return {};
  return {{Level::kWarning,
           "service " + j.kubelet_service + " no longer depends on " + j.dxshim_service +
               " (it depends on " + JoinDependencies(kubelet->dependencies) +
               "; image-builder's RestartKubelet.ps1 makes it again with depend= containerd): at "
               "boot kubelet may start before dxshim serves its pipe",
           "run `dxshim install` again: it adds the dependency back"}};
}

}  // namespace

std::vector<InstallFinding> InstallHealth(NodeSystem& node, const std::string& record_path) {
  std::optional<InstallJournal> journal;
  try {
    journal = LoadJournal(node, record_path);
  } catch (const NodeError& e) {
    return {{Level::kFailed, e.what(), "check the file; `dxshim uninstall` reads it too"}};
  }
  if (!journal) return {};
  if (journal->procedure) return Interrupted(*journal->procedure);
  std::vector<InstallFinding> findings = {{Level::kOk,
                                           "installed in " + journal->mode + " mode (" +
                                               journal->launcher + "), recorded in " + record_path,
                                           ""}};
  if (journal->mode == "takeover") {
    const auto ttrpc = Ttrpc(node, *journal);
    findings.insert(findings.end(), ttrpc.begin(), ttrpc.end());
  }
  const auto dependency = Dependency(node, *journal);
  findings.insert(findings.end(), dependency.begin(), dependency.end());
  return findings;
}

}  // namespace dxshim::install
