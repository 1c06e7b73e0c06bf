// What `dxshim install` would change on this node, computed before anything changes (and printed
// by --dry-run). Two ways to put dxshim between kubelet and containerd:
//   - endpoint: kubelet's runtime endpoint is set to dxshim's pipe where kubelet's launcher reads
//     it (kubelet_launch.h); kubelet (or rke2) is restarted;
//   - takeover: for a launcher that writes the endpoint into a script the distribution owns
//     (AKS): containerd moves to another pipe ([grpc] address in its config.toml) and dxshim
//     serves the pipe kubelet already uses; containerd is restarted (its runhcs shims keep the
//     containers), kubelet is not (its gRPC channel reconnects to the same pipe name).
// Either way kubelet's service comes to depend on dxshim's, so that dxshim starts first.
#pragma once

#include <string>
#include <vector>

#include "shim/node/kubelet_launch.h"
#include "shim/node/node_change.h"

namespace dxshim::node {

enum class InstallMode { kEndpoint, kTakeover };
std::string_view InstallModeName(InstallMode mode);

struct PlanOptions {
  std::string service = "dxshim";                         // dxshim's service name
  std::string dxshim_endpoint = "npipe://./pipe/dxshim";  // endpoint mode: kubelet's new endpoint
  std::string dxshim_config;  // dxshim.yaml (takeover sets listen and runtime there)
  // takeover: where containerd moves, and its config file (empty: from the containerd service's
  // --config, else containerd's default C:\Program Files\containerd\config.toml).
  std::string takeover_pipe = "\\\\.\\pipe\\containerd-behind-dxshim";
  std::string containerd_config;
  std::vector<std::string> node_labels;  // key=value: kubelet's --node-labels gets these, its
                                         // other labels kept and earlier dxshim.io/ ones replaced
};

struct InstallPlan {
  InstallMode mode = InstallMode::kEndpoint;
  std::vector<NodeChange> changes;  // only what differs from the node now
  // Restarted when `changes` holds more than dependencies: kubelet's service (endpoint mode) or
  // containerd's (takeover).
  std::string restart;
  std::string kubelet_endpoint;  // the endpoint kubelet uses once the plan is applied
  std::string dxshim_listen;     // takeover: the pipe dxshim must serve
  std::vector<std::string> notes;

  bool NeedsRestart() const;
};

// InstallMode for `name` ("auto", "endpoint", "takeover"): auto is takeover where the launcher
// writes the endpoint in its own script, else endpoint. Throws NodeError for another name, or a
// mode this launcher cannot take.
InstallMode ChooseMode(const KubeletLaunch& launch, std::string_view name);

// Throws NodeError naming what stops the plan (an unknown launcher with the setting to change,
// a file that cannot be edited safely, containerd and kubelet on different pipes, ...).
InstallPlan PlanInstall(NodeSystem& node, const KubeletLaunch& launch, InstallMode mode,
                        const PlanOptions& options);

// What an operator changes by hand when the launcher is unknown.
std::string ManualSteps(const PlanOptions& options);

// `current` (kubelet's --node-labels, comma separated) with every dxshim.io/ label replaced by
// `labels`, the others kept in order.
std::string MergeNodeLabels(const std::string& current, const std::vector<std::string>& labels);

// "npipe://./pipe/NAME" for \\.\pipe\NAME.
std::string PipeEndpoint(const std::string& pipe_path);

}  // namespace dxshim::node
