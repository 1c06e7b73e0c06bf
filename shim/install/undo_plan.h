// What undoing an install means for the node as it is now: for each value install changed (the
// journal's record, and the writes a procedure in progress has begun), what it holds now against
// what it held before install and what install wrote there:
//   - what it held before: nothing to do;
//   - a value install wrote (the last, or one written on the way): the value from before;
//   - something else (the distribution rebuilt it: image-builder's RestartKubelet.ps1 recreates
//     kubelet's service from kubeadm-flags.env with `depend= containerd`): only dxshim's own
//     setting in it is taken back where it can be found (kubelet's dependency on dxshim, a flag
//     dxshim set), the rest is left as it is; where dxshim's setting is not there, nothing;
//   - a value dxshim cannot take its setting out of safely (a file it does not understand as
//     flags): refused, naming it, and nothing changes.
#pragma once

#include <string>
#include <vector>

#include "shim/install/install_journal.h"
#include "shim/install/install_procedure.h"

namespace dxshim::install {

struct Undo {
  UndoPlan plan;
  std::vector<std::string> notes;     // values changed since install, and what is done with them
  std::vector<std::string> refusals;  // values that cannot be undone: nothing may change
};

// `whole`: the record and the procedure in progress (uninstall, an interrupted run); else only the
// procedure in progress (the rollback of an install that was not proven).
Undo PlanUndo(NodeSystem& node, const InstallJournal& journal, bool whole);

}  // namespace dxshim::install
