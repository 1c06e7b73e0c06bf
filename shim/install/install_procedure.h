// The steps that carry out an install plan, and those that undo one, in the order that keeps the
// node working at every step (install_step.h). The rules, for each mode:
//   - every value a service reads at its start is written while the service runs on, so that
//     containerd's or kubelet's stop waits until its replacement can start at once;
//   - the service manager refuses to stop a service whose dependents run, so kubelet's service
//     stops depending on what stops meanwhile, and gets its final dependencies last;
//   - takeover: dxshim is asked to start before containerd stops and takes the pipe the moment
//     containerd lets it go; the window in which kubelet has no runtime runs from containerd's
//     stop to the first CRI call answered through kubelet's pipe;
//   - endpoint: dxshim runs before kubelet restarts; kubelet is down from its stop to its start.
#pragma once

#include <string>
#include <vector>

#include "shim/install/install_plan.h"
#include "shim/install/install_step.h"

namespace dxshim::install {

std::vector<Step> InstallSteps(const InstallPlan& plan);

// What undoing an install means for the node now (undo_plan.h computes it from the journal).
struct UndoPlan {
  std::string mode;  // "endpoint", "takeover", "service-only"
  std::string kubelet_service;
  std::string containerd_service;
  std::string dxshim_service;
  std::string kubelet_pipe_before;  // served by containerd again once undone
  // Each value to put back (kWrite steps): `before` is what the node holds now, `after` what is
  // written (or `remove`: a file that was not there).
  std::vector<Step> writes;
  std::vector<std::string> kubelet_dependencies;  // kubelet's service's, now
  bool restart_launcher = false;    // kubelet's service (endpoint) or containerd's (takeover)
  bool delete_service = false;      // install created dxshim's service
  bool dxshim_was_running = false;  // a service that stays ran before install
};

std::vector<Step> UndoSteps(const UndoPlan& undo);

}  // namespace dxshim::install
