// The install journal, %ProgramData%\dxshim\install-record.json: what `dxshim install` changed on
// this node (every value with what it held before and what install wrote, the mode, whether
// install created the dxshim service), which uninstall undoes; and the procedure in progress, if
// any, with each step's state, written before and after each step is applied, so that a run that
// was interrupted (killed, a reboot) is finished or undone by the next one. Values are kept as
// base64 next to a readable summary, so that a file comes back byte for byte (CRLF, no BOM, ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/install/install_step.h"
#include "shim/install/node_change.h"

namespace dxshim::install {

struct Procedure {
  enum class Kind { kInstall, kRollback, kUninstall };
  Kind kind = Kind::kInstall;
  // kInstall: the changes this install makes, merged into the record once it is proven, and
  // whether it creates dxshim's service.
  std::vector<NodeChange> changes;
  bool creates_service = false;
  std::vector<Step> steps;

  bool operator==(const Procedure&) const = default;
};
std::string_view ProcedureName(Procedure::Kind kind);  // "install", "rollback", "uninstall"
// "an interrupted install stopped after step 2 of 9": a procedure a run left unfinished.
std::string DescribeInterrupted(const Procedure& p);

struct InstallJournal {
  std::string mode;  // "endpoint", "takeover" or "service-only"
  std::string launcher;
  std::string kubelet_service;     // the service that runs kubelet ("kubelet", "rke2")
  std::string containerd_service;  // the service that runs containerd ("containerd", "rke2")
  std::string dxshim_service = "dxshim";
  std::string kubelet_pipe_before;     // the pipe kubelet used before dxshim (\\.\pipe\...)
  std::string kubelet_pipe;            // the pipe kubelet uses once installed
  std::string moved_pipe;              // takeover: where containerd serves meanwhile
  bool created_service = false;        // install created the dxshim service
  bool dxshim_was_running = false;     // a dxshim service that install found was running
  std::vector<NodeChange> changes;     // the record: each value's first `before`, last `after`
  std::optional<Procedure> procedure;  // one in progress (left by an interrupted run)

  // Records nothing: no change, no service created, no procedure in progress (the file goes).
  bool Empty() const;
  // Adds the changes of an install: a target already recorded keeps its first `before` (the
  // node as it was before dxshim) and takes the new `after`.
  void Merge(const std::vector<NodeChange>& later);
  bool operator==(const InstallJournal&) const = default;
};

std::string WriteInstallJournal(const InstallJournal& journal);
// Throws NodeError naming what is wrong with the text.
InstallJournal ReadInstallJournal(const std::string& text);

}  // namespace dxshim::install
