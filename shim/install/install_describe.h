// What `dxshim install` and `uninstall` say, in one place: the launcher found, the plan (every
// change and restart, also what --dry-run prints), how long kubelet had no runtime, the node
// labels to apply by hand, and for --service-only the bootstrap setting that points kubelet at
// dxshim on this launcher.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/install/install_plan.h"
#include "shim/install/install_step.h"
#include "shim/install/kubelet/kubelet_launch.h"
#include "shim/install/kubelet/kubelet_proof.h"

namespace dxshim::install {

std::vector<std::string> DescribeLaunch(const KubeletLaunch& launch);
std::vector<std::string> DescribePlan(const InstallPlan& plan, const std::vector<Step>& steps);
// The steps a procedure will take, numbered as an interrupted run names them.
std::vector<std::string> DescribeSteps(const std::vector<Step>& steps);

// "kubelet had no runtime for 1.234 s (...)" from the steps' times, or for an endpoint switch from
// kubelet's stop to the first CRI call its new process made through dxshim (`proof`); nullopt
// when nothing stopped kubelet's runtime.
std::optional<std::string> DescribeWindow(const std::vector<Step>& steps,
                                          const std::optional<Proof>& proof);

// The line that labels an already registered node with `labels` (kubectl label ...).
std::string LabelCommand(const std::string& node_name, const std::vector<std::string>& labels);

// --service-only: how this launcher's bootstrap points kubelet at `endpoint`; nullopt where there
// is no supported way (AKS: its script writes the endpoint itself).
std::optional<std::string> BootstrapSetting(const KubeletLaunch& launch,
                                            const std::string& endpoint);

}  // namespace dxshim::install
