#include "shim/install/procedure_run.h"

#include <optional>

#include "shim/install/install_describe.h"
#include "shim/install/install_procedure.h"
#include "shim/install/journal_file.h"
#include "shim/install/kubelet/kubelet_proof.h"
#include "shim/install/undo_plan.h"

namespace dxshim::install {

bool CarryOut(ProcedureRun& r, InstallJournal& journal, Start start) {
  StepContext context{
      r.node,     &r.probe, r.service_timeout, r.say, [&] { KeepJournal(r.node, r.path, journal); },
      r.interrupt};
  if (start == Start::kInterrupted) {
    r.say(DescribeInterrupted(*journal.procedure) + ": finishing it first");
  }
  try {
    context.save();  // every step recorded before the first is applied
  } catch (const NodeError& e) {
    r.say(std::string("cannot write the install journal ") + r.path + ": " + e.what() +
          "; nothing more was changed");
    return false;
  }
  bool rolled_back = false;  // this run's install was not proven
  while (journal.procedure) {
    Procedure& p = *journal.procedure;
    const Procedure::Kind kind = p.kind;
    std::string failure;
    try {
      RunSteps(p.steps, context);
      std::optional<Proof> proof;
      if (kind == Procedure::Kind::kInstall) {
        proof = ProveInstall(r.node, r.probe, {journal.kubelet_pipe, journal.dxshim_service},
                             journal.mode == "service-only", r.proof_timeout, r.say);
        if (!proof->ok) throw NodeError("kubelet is not proven to use dxshim: " + proof->what);
        r.say("proof: " + proof->what);
      }
      if (const auto window = DescribeWindow(p.steps, proof)) r.say(*window);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (failure.empty()) {
      // Done: the record without the procedure (an install's changes merged in; nothing left
      // after an uninstall), kept in memory only once it is on disk. A journal that cannot be
      // written keeps the procedure with every step done there, and the next run ends it.
      InstallJournal ended = kind == Procedure::Kind::kUninstall ? InstallJournal{} : journal;
      if (kind == Procedure::Kind::kInstall) {
        ended.Merge(p.changes);
        ended.created_service = ended.created_service || p.creates_service;
      }
      ended.procedure.reset();
      std::swap(journal, ended);
      try {
        context.save();  // the record, or no file when it records nothing
      } catch (const NodeError& e) {
        journal = std::move(ended);
        r.say("the " + std::string(ProcedureName(kind)) + " is done, but the journal " + r.path +
              " could not be updated: " + e.what() + "; run dxshim " +
              (kind == Procedure::Kind::kUninstall ? "uninstall" : "install") +
              " again to record it");
        return false;
      }
      if (kind == Procedure::Kind::kRollback) {
        r.say("rolled back: the node is as it was before this install");
      }
      continue;
    }
    if (kind == Procedure::Kind::kUninstall) {
      r.say("uninstall failed: " + failure + "; the journal " + r.path +
            " is kept (run dxshim uninstall again to finish)");
      return false;
    }
    const std::string rollback_failed = "; the journal " + r.path +
                                        " says what install changed (run dxshim install or "
                                        "uninstall again to finish)";
    if (kind == Procedure::Kind::kRollback) {
      r.say("ROLLBACK FAILED: " + failure + rollback_failed);
      return false;
    }
    r.say("install failed: " + failure + " -- rolling back");
    Undo undo;
    try {
      undo = PlanUndo(r.node, journal, /*whole=*/false);
    } catch (const NodeError& e) {
      r.say(std::string("ROLLBACK FAILED: ") + e.what() + rollback_failed);
      return false;
    }
    for (const auto& line : undo.notes) r.say(line);
    if (!undo.refusals.empty()) {
      r.say("ROLLBACK FAILED: " + undo.refusals.front() + rollback_failed);
      return false;
    }
    journal.procedure = Procedure{Procedure::Kind::kRollback, {}, false, UndoSteps(undo.plan)};
    rolled_back = true;
  }
  return !rolled_back;
}

}  // namespace dxshim::install
