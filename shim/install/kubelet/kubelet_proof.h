// Proof that kubelet talks to dxshim, read from the live node and from dxshim itself rather than
// from the files that were changed, the same in every mode and needing no optional setting:
//   - the pipe kubelet uses is served by the dxshim service's own process (the system names the
//     pipe's server; an impostor cannot take a pipe name dxshim holds);
//   - dxshim, asked over that pipe, names every running kubelet.exe process among those that made
//     CRI calls through it.
// Install reports success only with this proof, and rolls back without it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shim/install/system/dxshim_probe.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install {

struct Proof {
  bool ok = false;
  std::string what;                         // what was seen, or why it is not proof
  std::vector<CriCaller> kubelets;          // dxshim's record of each running kubelet.exe
  std::optional<std::uint32_t> dxshim_pid;  // the process that serves the pipe and answered
};

struct ProofTarget {
  std::string pipe;            // \\.\pipe\NAME: the pipe kubelet uses, dxshim's
  std::string dxshim_service;  // the service whose process must serve it
};

// Whether dxshim serves `target.pipe` and answers there, and which running kubelet.exe processes
// made CRI calls through it; ok only when there is at least one and all did.
Proof CheckKubeletUses(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target);

// CheckKubeletUses until it holds or `timeout` passes; the last answer.
Proof ProveKubeletUses(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target,
                       std::chrono::milliseconds timeout);

// The proof an install asks for: ProveKubeletUses; with `service_only` (kubelet is not pointed at
// dxshim by install) one CheckKubeletUses, and a dxshim service that serves the pipe and answers is
// proof enough (`say` is told whether kubelet calls it yet).
Proof ProveInstall(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target,
                   bool service_only, std::chrono::milliseconds timeout,
                   const std::function<void(const std::string&)>& say);

// The endpoint a kubelet started with `command_line` uses: its flag, else its config-dir
// drop-ins, else its --config file, else kubelet's default. Throws NodeError when a file it names
// cannot be read. (doctor reports it.)
std::string LiveKubeletEndpoint(NodeSystem& node, const std::string& command_line);

}  // namespace dxshim::install
