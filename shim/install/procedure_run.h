// Carrying out the journal's procedures, one loop for all of them: the procedure in progress is
// run to its end, each step journaled as begun and as done (install_step.h); an install is then
// proven (kubelet_proof.h) and recorded, or rolled back without the proof; a rollback and an
// uninstall are ended. An install that is rolled back is followed by its rollback in the same
// loop, so every procedure, a new one or one an interrupted run left, is applied, described,
// ended and written the same way.
#pragma once

#include <chrono>
#include <string>

#include "shim/install/install_journal.h"
#include "shim/install/install_step.h"
#include "shim/install/system/dxshim_probe.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install {

struct ProcedureRun {
  NodeSystem& node;
  DxshimProbe& probe;
  std::string path;  // the journal
  std::chrono::milliseconds service_timeout;
  std::chrono::milliseconds proof_timeout;
  Say say;
  Interrupt interrupt;
};

enum class Start {
  kNew,          // the procedure was planned by this run
  kInterrupted,  // a run before this one began it: said, then finished first
};

// Carries out `journal`'s procedure, and the rollback an install that is not proven calls for,
// keeping the journal on disk at every step (KeepJournal). True when the procedures ended as they
// were meant to: an install proven and recorded, a rollback or uninstall begun by an earlier run
// done. False when an install was rolled back, or a procedure failed: what happened is said, and
// the journal keeps what is left to do.
bool CarryOut(ProcedureRun& run, InstallJournal& journal, Start start);

}  // namespace dxshim::install
