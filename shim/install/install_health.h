// What the install journal says of this node as it is now, for `dxshim doctor`:
//   - a run that was interrupted (its procedure still in the journal): re-run to finish it;
//   - takeover: containerd's TTRPC pipe no longer where the running shims publish their events
//     (a task's exit among them), or not served; containerd's config no longer moving its pipe;
//   - kubelet's service no longer depending on dxshim (image-builder's RestartKubelet.ps1 deletes
//     and makes it again with `depend= containerd`): at boot kubelet may start before dxshim.
#pragma once

#include <string>
#include <vector>

#include "shim/install/system/node_system.h"

namespace dxshim::install {

struct InstallFinding {
  enum class Level { kOk, kWarning, kFailed };
  Level level = Level::kOk;
  std::string what;
  std::string fix;
};

// Empty when there is no journal at `record_path` (dxshim install has not changed this node).
std::vector<InstallFinding> InstallHealth(NodeSystem& node, const std::string& record_path);

}  // namespace dxshim::install
