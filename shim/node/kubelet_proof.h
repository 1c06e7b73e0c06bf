// Proof that kubelet now talks to dxshim, read from the live node rather than from the files that
// were changed: the running kubelet.exe's own command line (and the config files it names), its
// /healthz, and in takeover mode the pipe's serving process and dxshim's count of calls relayed
// for kubelet. Install reports success only with this proof, and rolls back without it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "shim/node/node_system.h"

namespace dxshim::node {

struct Proof {
  bool ok = false;
  std::string what;  // what was seen, or why it is not proof
};

struct ProofTarget {
  std::string kubelet_endpoint;  // the endpoint the live kubelet must use
  std::string healthz_address = "127.0.0.1";
  int healthz_port = 10248;
  // takeover: the service that must serve kubelet's pipe, and its metrics endpoint (host:port)
  // where dxshim_pipe_clients_total{program="kubelet.exe"} counts kubelet's connections.
  std::string dxshim_service;
  std::string metrics_address;
};

// The endpoint a kubelet started with `command_line` uses: its flag, else its config-dir
// drop-ins, else its --config file, else kubelet's default. Throws NodeError when a file it names
// cannot be read.
std::string LiveKubeletEndpoint(NodeSystem& node, const std::string& command_line);

// Checks until it holds or `timeout` passes; the last reason when it does not.
Proof ProveKubeletUses(NodeSystem& node, const ProofTarget& target,
                       std::chrono::milliseconds timeout);

// Kubelet's /healthz on `target`: "ok" with 200.
Proof KubeletHealthy(NodeSystem& node, const ProofTarget& target);

}  // namespace dxshim::node
