#include "shim/node/kubelet_proof.h"

#include <algorithm>
#include <regex>
#include <variant>

#include "shim/base/host_port.h"
#include "shim/node/command_line.h"
#include "shim/node/config_file_edit.h"
#include "shim/node/kubelet_endpoint.h"
#include "shim/node/kubelet_flags.h"
#include "shim/node/kubelet_launch.h"

namespace dxshim::node {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

Proof Check(NodeSystem& node, const ProofTarget& target) {
  std::vector<ProcessInfo> kubelets;
  for (auto& process : node.Processes()) {
    if (FileNameOf(process.program) == "kubelet.exe") kubelets.push_back(process);
  }
  if (kubelets.empty()) return {false, "no kubelet.exe process runs"};
  const std::string wanted = PipePathOf(target.kubelet_endpoint);
  for (const auto& kubelet : kubelets) {
    if (kubelet.command_line.empty()) {
      return {false, "kubelet.exe (pid " + std::to_string(kubelet.pid) +
                         ")'s command line cannot be read"};
    }
    std::string live;
    try {
      live = LiveKubeletEndpoint(node, kubelet.command_line);
    } catch (const NodeError& e) {
      return {false, e.what()};
    }
    if (PipePathOf(live) != wanted) {
      return {false, "the running kubelet.exe (pid " + std::to_string(kubelet.pid) + ") uses " +
                         live + ", not " + target.kubelet_endpoint};
    }
  }
  std::string seen = "the running kubelet.exe (pid " + std::to_string(kubelets.front().pid) +
                     ") uses " + target.kubelet_endpoint;
  if (!target.dxshim_service.empty()) {
    const auto service = node.Service(target.dxshim_service);
    const auto server = node.PipeServer(PipePathOf(target.kubelet_endpoint));
    if (!service || !service->running || !server || *server != service->pid) {
      return {false, PipePathOf(target.kubelet_endpoint) + " is not served by the " +
                         target.dxshim_service + " service" +
                         (server ? " (its server is pid " + std::to_string(*server) + ")" : "")};
    }
    const auto parsed = ParseHostPort(target.metrics_address);
    const auto* address = std::get_if<HostPort>(&parsed);
    if (!address) {
      return {false,
              "dxshim's metrics endpoint is off (metrics-listen): the calls it relays "
              "for kubelet cannot be counted"};
    }
    if (address->port == 0) {
      return {false, "dxshim's metrics endpoint takes any free port (metrics-listen " +
                         target.metrics_address +
                         "): the calls it relays for kubelet cannot be counted here"};
    }
    const auto metrics =
        node.HttpGet(address->DialHost(), address->port, "/metrics", std::chrono::seconds(5));
    static const std::regex kCount(
        R"re((^|\n)dxshim_pipe_clients_total\{program="kubelet\.exe"\} ([0-9.e+]+))re");
    std::smatch match;
    if (!metrics || metrics->status != 200 || !std::regex_search(metrics->body, match, kCount) ||
        std::stod(match[2].str()) < 1) {
      return {false, "dxshim has not yet relayed a connection from kubelet.exe (" +
                         target.metrics_address + "/metrics)"};
    }
    seen += ", served by " + target.dxshim_service + " (pid " + std::to_string(service->pid) +
            "), which has relayed kubelet's calls";
  }
  auto health = KubeletHealthy(node, target);
  if (!health.ok) return health;
  return {true, seen + "; " + health.what};
}

}  // namespace

std::string LiveKubeletEndpoint(NodeSystem& node, const std::string& command_line) {
  KubeletFiles files;
  files.read = [&node](const std::string& path) { return node.ReadFile(path); };
  files.list = [&node](const std::string& folder) { return node.ListFiles(folder); };
  files.resolve = [&node](const std::string& path) { return NodePath(node, path); };
  files.separator = '\\';
  return KubeletEndpoint(SplitCommandLine(command_line), files).value;
}

Proof KubeletHealthy(NodeSystem& node, const ProofTarget& target) {
  const std::string address = target.healthz_address == "0.0.0.0" || target.healthz_address.empty()
                                  ? "127.0.0.1"
                                  : target.healthz_address;
  const auto answer =
      node.HttpGet(address, target.healthz_port, "/healthz", std::chrono::seconds(5));
  const std::string where =
      "http://" + address + ":" + std::to_string(target.healthz_port) + "/healthz";
  if (!answer) return {false, "kubelet's " + where + " does not answer"};
  if (answer->status != 200 || answer->body != "ok") {
    return {false, "kubelet's " + where + " answers " + std::to_string(answer->status) + " " +
                       answer->body.substr(0, 200)};
  }
  return {true, "its " + where + " answers ok"};
}

Proof ProveKubeletUses(NodeSystem& node, const ProofTarget& target, milliseconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  Proof last;
  while (true) {
    last = Check(node, target);
    if (last.ok || steady_clock::now() >= deadline) return last;
    node.Sleep(milliseconds(1000));
  }
}

}  // namespace dxshim::node
