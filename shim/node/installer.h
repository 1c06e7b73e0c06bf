// `dxshim install` and `dxshim uninstall` on a node: find kubelet's launcher, plan, record, apply,
// restart only what the change needs, and prove the result on the live node; without the proof,
// undo and say why. Uninstall undoes only what the record says install changed, and only while
// each value is still the one install wrote.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "shim/node/install_plan.h"
#include "shim/node/node_system.h"

namespace dxshim::node {

// Exit codes: what happened, for scripts (install.ps1) and the DaemonSet.
enum InstallExit : int {
  kInstalled = 0,       // changed and proven, or nothing to change and the node already proven
  kFailed = 1,          // not proven (rolled back), refused, or the node could not be read/changed
  kUsage = 2,           // bad options
  kUnknownLauncher = 3  // nothing changed; the setting to change was printed
};

struct InstallOptions {
  PlanOptions plan;
  std::string mode = "auto";
  std::string dxshim_command_line;  // the dxshim service's command line
  std::string record_path;          // install-record.json
  bool service_only = false;        // the dxshim service alone: kubelet and containerd untouched
  bool dry_run = false;             // print the plan, change nothing
  bool restart_service = false;     // the dxshim binary was replaced: restart its service (alone)
  std::chrono::milliseconds service_timeout{std::chrono::seconds(90)};
  std::chrono::milliseconds proof_timeout{std::chrono::seconds(180)};
  std::function<void(const std::string&)> say;
};

struct UninstallOptions {
  std::string service = "dxshim";
  std::string record_path;
  std::chrono::milliseconds service_timeout{std::chrono::seconds(90)};
  std::chrono::milliseconds proof_timeout{std::chrono::seconds(180)};
  std::function<void(const std::string&)> say;
};

int Install(NodeSystem& node, const InstallOptions& options);
int Uninstall(NodeSystem& node, const UninstallOptions& options);

}  // namespace dxshim::node
