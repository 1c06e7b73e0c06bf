#include "shim/install/install_procedure.h"

#include <algorithm>
#include <cctype>

#include "shim/base/ascii_case.h"

namespace dxshim::install {
namespace {

Step On(Step::Kind kind, const std::string& service, bool opens = false, bool closes = false) {
  Step step;
  step.kind = kind;
  step.service = service;
  step.opens_window = opens;
  step.closes_window = closes;
  return step;
}

Step WaitFor(Step::Kind kind, const std::string& pipe, const std::string& service = "",
             bool closes = false) {
  Step step = On(kind, service, false, closes);
  step.pipe = pipe;
  return step;
}

Step Write(const NodeChange& change) {
  Step step;
  step.change = change;
  return step;
}

bool IsDependenciesOf(const NodeChange& change, const std::string& service) {
  return change.kind == NodeChange::Kind::kServiceDependencies &&
         ToLowerAscii(change.target) == ToLowerAscii(service);
}

std::vector<std::string> Without(std::vector<std::string> list,
                                 const std::vector<std::string>& names) {
  std::erase_if(list, [&](const std::string& d) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return !n.empty() && ToLowerAscii(n) == ToLowerAscii(d);
    });
  });
  return list;
}

// Kubelet's dependencies: `now` -> `during` while services stop and start, then -> `after`. A
// write is planned only where the value changes; `steps` gets the first, the caller the second.
class KubeletDependencies {
 public:
  KubeletDependencies(std::string service, const std::vector<std::string>& now, std::string after,
                      std::string why)
      : service_(std::move(service)),
        now_(JoinDependencies(now)),
        after_(std::move(after)),
        why_(std::move(why)),
        during_(now_) {}

  void Narrow(std::vector<Step>& steps, const std::vector<std::string>& stopping) {
    if (service_.empty()) return;
    during_ = JoinDependencies(Without(SplitDependencies(now_), stopping));
    if (during_ != now_) {
      steps.push_back(Write(Change(
          now_, during_, "service " + service_ + " does not wait for what restarts meanwhile")));
    }
  }
  void Finish(std::vector<Step>& steps) const {
    if (!service_.empty() && during_ != after_)
      steps.push_back(Write(Change(during_, after_, why_)));
  }

 private:
  NodeChange Change(const std::string& before, const std::string& after,
                    const std::string& why) const {
    NodeChange change;
    change.kind = NodeChange::Kind::kServiceDependencies;
    change.target = service_;
    change.before = before;
    change.after = after;
    change.why = why;
    return change;
  }
  std::string service_, now_, after_, why_, during_;
};

KubeletDependencies KubeletDependenciesOf(const InstallPlan& plan) {
  std::string after = JoinDependencies(plan.kubelet_dependencies);
  std::string why;
  for (const auto& c : plan.changes) {
    if (IsDependenciesOf(c, plan.kubelet_service)) {
      after = c.after;
      why = c.why;
    }
  }
  return {plan.kubelet_service, plan.kubelet_dependencies, after, why};
}

// Takeover: containerd stops only once everything its replacement needs is written, and dxshim
// starts the moment it has stopped, beside containerd's own start.
void TakeoverSwitch(const InstallPlan& plan, std::vector<Step>& steps) {
  const std::string& dxshim = plan.dxshim_service;
  if (plan.RestartsLauncher()) {
    if (plan.dxshim_running) steps.push_back(On(Step::Kind::kStop, dxshim, plan.taken_over));
    steps.push_back(On(Step::Kind::kStop, plan.containerd_service, true));
    steps.push_back(On(Step::Kind::kRequestStart, dxshim));
    steps.push_back(On(Step::Kind::kStart, plan.containerd_service));
    steps.push_back(WaitFor(Step::Kind::kWaitPipe, plan.moved_pipe));
  } else if (plan.restart_dxshim) {
    steps.push_back(On(Step::Kind::kStop, dxshim, true));
  }
  steps.push_back(On(Step::Kind::kStart, dxshim));
  steps.push_back(WaitFor(Step::Kind::kWaitPipe, plan.kubelet_pipe, dxshim));
  if (plan.RestartsLauncher() || plan.restart_dxshim) {
    steps.push_back(WaitFor(Step::Kind::kWaitRuntime, plan.kubelet_pipe, "", true));
  }
}

// Endpoint and service-only: dxshim (re)started and serving, then kubelet restarted onto it.
void EndpointSwitch(const InstallPlan& plan, std::vector<Step>& steps,
                    const KubeletDependencies& dependencies) {
  const std::string& dxshim = plan.dxshim_service;
  const bool kubelet_on_dxshim = plan.kubelet_pipe_before == plan.dxshim_pipe;
  if (plan.restart_dxshim) steps.push_back(On(Step::Kind::kStop, dxshim, kubelet_on_dxshim));
  steps.push_back(On(Step::Kind::kStart, dxshim));
  steps.push_back(WaitFor(Step::Kind::kWaitPipe, plan.dxshim_pipe, dxshim));
  if (plan.restart_dxshim && kubelet_on_dxshim) {
    steps.push_back(WaitFor(Step::Kind::kWaitRuntime, plan.dxshim_pipe, "", true));
  }
  dependencies.Finish(steps);
  if (plan.mode == InstallMode::kServiceOnly || plan.kubelet_service.empty()) return;
  if (plan.RestartsLauncher()) {
    steps.push_back(On(Step::Kind::kStop, plan.kubelet_service, true));
  }
  steps.push_back(On(Step::Kind::kStart, plan.kubelet_service));
}

}  // namespace

std::vector<Step> InstallSteps(const InstallPlan& plan) {
  std::vector<Step> steps;
  if (plan.create_dxshim) {
    Step create = On(Step::Kind::kCreateService, plan.dxshim_service);
    create.spec = *plan.create_dxshim;
    steps.push_back(create);
  }
  for (const auto& c : plan.changes) {
    if (!IsDependenciesOf(c, plan.kubelet_service)) steps.push_back(Write(c));
  }
  auto dependencies = KubeletDependenciesOf(plan);
  const bool takeover = plan.mode == InstallMode::kTakeover;
  const bool stops_containerd = takeover && plan.RestartsLauncher();
  const bool stops_dxshim = plan.restart_dxshim || (stops_containerd && plan.dxshim_running);
  dependencies.Narrow(steps, {stops_containerd ? plan.containerd_service : "",
                              stops_dxshim ? plan.dxshim_service : ""});
  if (takeover) {
    TakeoverSwitch(plan, steps);
    dependencies.Finish(steps);
  } else {
    EndpointSwitch(plan, steps, dependencies);
  }
  return steps;
}

std::vector<Step> UndoSteps(const UndoPlan& undo) {
  std::vector<Step> steps;
  const bool takeover = undo.mode == "takeover";
  std::string kubelet_after = JoinDependencies(undo.kubelet_dependencies);
  for (const auto& w : undo.writes) {
    if (IsDependenciesOf(w.change, undo.kubelet_service)) kubelet_after = w.change.after;
  }
  KubeletDependencies dependencies(undo.kubelet_service, undo.kubelet_dependencies, kubelet_after,
                                   "service " + undo.kubelet_service + "'s dependencies restored");
  if (takeover) {
    dependencies.Narrow(steps, {undo.containerd_service, undo.dxshim_service});
  } else {
    dependencies.Narrow(steps, {undo.dxshim_service});
  }
  for (const auto& w : undo.writes) {
    if (!IsDependenciesOf(w.change, undo.kubelet_service)) steps.push_back(w);
  }
  const std::string& dxshim = undo.dxshim_service;
  if (takeover && undo.restart_launcher) {
    steps.push_back(On(Step::Kind::kStop, dxshim, true));
    steps.push_back(On(Step::Kind::kStop, undo.containerd_service));
    steps.push_back(On(Step::Kind::kStart, undo.containerd_service));
    steps.push_back(WaitFor(Step::Kind::kWaitPipe, undo.kubelet_pipe_before));
    steps.push_back(WaitFor(Step::Kind::kWaitRuntime, undo.kubelet_pipe_before, "", true));
  }
  if (!takeover && undo.restart_launcher && !undo.kubelet_service.empty()) {
    steps.push_back(On(Step::Kind::kStop, undo.kubelet_service, true));
    steps.push_back(On(Step::Kind::kStart, undo.kubelet_service, false, true));
  }
  if (undo.delete_service) {
    steps.push_back(On(Step::Kind::kDeleteService, dxshim));
  } else {
    steps.push_back(On(Step::Kind::kStop, dxshim));
    if (undo.dxshim_was_running) steps.push_back(On(Step::Kind::kStart, dxshim));
  }
  if (takeover) steps.push_back(On(Step::Kind::kStart, undo.containerd_service));
  dependencies.Finish(steps);
  return steps;
}

}  // namespace dxshim::install
