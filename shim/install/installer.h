// `dxshim install` and `dxshim uninstall` on a node, in phases:
//   check    -> no other GPU device plugin registered with kubelet (other_gpu_plugins.h)
//   plan     -> find kubelet's launcher and compute every change (install_plan.h)
//   describe -> say what will change, and stop there for --dry-run
//   journal  -> the steps, as the procedure in progress (install_journal.h)
// and then the procedure is carried out (procedure_run.h): recorded before any step is applied,
//   apply    -> run, each step journaled as begun and as done (install_step.h)
//   prove    -> dxshim itself says the running kubelet makes its CRI calls through it
//               (kubelet_proof.h), and how long kubelet had no runtime is said
//   roll back-> without the proof, what this install did undone (undo_plan.h), in the same loop
// A journal left by an interrupted run is dealt with first: an install in progress is finished
// (then proven, or rolled back), a rollback or an uninstall in progress is finished. Uninstall
// undoes whatever the journal holds, a finished install or any part of one.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "shim/install/install_plan.h"
#include "shim/install/install_step.h"
#include "shim/install/system/dxshim_probe.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install {

// Where install keeps its journal unless told otherwise (environment variables expanded).
inline constexpr char kDefaultRecordPath[] = "%ProgramData%\\dxshim\\install-record.json";

// Exit codes: what happened, for scripts (install.ps1) and the DaemonSet.
enum InstallExit : int {
  kInstalled = 0,       // changed and proven, or nothing to change and the node already proven
  kFailed = 1,          // not proven (rolled back), refused, or the node could not be read/changed
  kUsage = 2,           // bad options
  kUnknownLauncher = 3  // nothing changed; the setting to change was printed
};

struct InstallOptions {
  PlanOptions plan;
  std::string mode = "auto";  // auto, endpoint, takeover
  std::string record_path;    // the journal, install-record.json
  bool service_only = false;  // the dxshim service alone: kubelet and containerd untouched
  bool dry_run = false;       // print the plan, change nothing
  // Another GPU device plugin registered with kubelet (other_gpu_plugins.h) refuses install,
  // before anything changes, unless allowed. Its checkpoint is in kubelet's device plugin folder
  // (empty: kWindowsDevicePluginDir); dxshim's own resources (as configured) are not another's.
  std::string device_plugin_dir;
  std::vector<std::string> dxshim_resources;
  bool dxshim_device_plugin = true;  // the configuration's device-plugin
  bool allow_other_gpu_plugin = false;
  std::chrono::milliseconds service_timeout{std::chrono::seconds(90)};
  std::chrono::milliseconds proof_timeout{std::chrono::seconds(180)};
  Say say;
  Interrupt interrupt;
};

struct UninstallOptions {
  std::string service = "dxshim";
  std::string record_path;
  std::chrono::milliseconds service_timeout{std::chrono::seconds(90)};
  Say say;
  Interrupt interrupt;
};

int Install(NodeSystem& node, DxshimProbe& probe, const InstallOptions& options);
int Uninstall(NodeSystem& node, DxshimProbe& probe, const UninstallOptions& options);

}  // namespace dxshim::install
