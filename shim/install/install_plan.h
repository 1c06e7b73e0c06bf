// What `dxshim install` would change on this node, computed before anything changes (and printed
// by --dry-run). Two ways to put dxshim between kubelet and containerd:
//   - endpoint: kubelet's runtime endpoint is set to dxshim's pipe where kubelet's launcher reads
//     it (kubelet_launch.h); kubelet (or rke2) is restarted;
//   - takeover: for a launcher that writes the endpoint into a script the distribution owns
//     (AKS): containerd moves to another pipe (its config.toml, with its TTRPC address kept where
//     it was: containerd_config.h) and dxshim serves the pipe kubelet already uses; containerd is
//     restarted (its runhcs shims keep the containers), kubelet is not (its gRPC channel
//     reconnects to the same pipe name).
// Either way kubelet's service comes to depend on dxshim's, so that dxshim starts first. A third
// way, service-only, installs the dxshim service alone for a bootstrap that points kubelet at it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/install/kubelet/kubelet_launch.h"
#include "shim/install/node_change.h"

namespace dxshim::install {

enum class InstallMode { kEndpoint, kTakeover, kServiceOnly };
std::string_view InstallModeName(InstallMode mode);

struct PlanOptions {
  std::string service = "dxshim";                         // dxshim's service name
  std::string dxshim_endpoint = "npipe://./pipe/dxshim";  // endpoint mode: kubelet's new endpoint
  std::string dxshim_config;        // dxshim.yaml (takeover sets listen and runtime there)
  std::string dxshim_command_line;  // the dxshim service's command line
  bool replaced_binary = false;     // dxshim's binary was replaced: restart its service
  // takeover: where containerd moves, and its config file (empty: from the containerd service's
  // --config, else containerd's default C:\Program Files\containerd\config.toml).
  std::string takeover_pipe = "\\\\.\\pipe\\containerd-behind-dxshim";
  std::string containerd_config;
  std::vector<std::string> node_labels;  // key=value: kubelet's --node-labels gets these, its
                                         // other labels kept and earlier dxshim.io/ ones replaced
};

struct InstallPlan {
  InstallMode mode = InstallMode::kEndpoint;
  // Only what differs from the node now: the launcher's settings, containerd's and dxshim's
  // configuration files, dxshim's command line, and kubelet's dependencies (the final list).
  std::vector<NodeChange> changes;
  std::string kubelet_service;     // "kubelet", "rke2"
  std::string containerd_service;  // "containerd", "rke2"
  std::string dxshim_service;
  std::string kubelet_endpoint;     // the endpoint kubelet uses once the plan is applied
  std::string kubelet_pipe_before;  // the pipe kubelet uses now
  std::string kubelet_pipe;         // ...and once applied (takeover: the same)
  std::string moved_pipe;           // takeover: where containerd serves once applied
  std::string dxshim_pipe;          // the pipe dxshim serves once applied
  std::vector<std::string> kubelet_dependencies;  // kubelet's service's, now
  bool taken_over = false;                   // takeover: containerd serves the moved pipe already
  std::optional<ServiceSpec> create_dxshim;  // no dxshim service yet: this one
  bool dxshim_running = false;               // it exists and runs
  bool restart_dxshim = false;               // it runs, and its command line or binary changed
  std::vector<std::string> notes;

  // Whether `changes` holds a value the launcher or containerd reads at its start (more than
  // dependencies and dxshim's own command line): kubelet's service (endpoint) or containerd's
  // (takeover) must restart.
  bool RestartsLauncher() const;
  // Nothing to create, change or restart.
  bool Empty() const;
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

}  // namespace dxshim::install
