#include "shim/install/kubelet/kubelet_proof.h"

#include <algorithm>

#include "shim/install/edit/command_line.h"
#include "shim/install/kubelet/kubelet_endpoint.h"
#include "shim/install/kubelet/kubelet_launch.h"

namespace dxshim::install {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string Pid(std::uint32_t pid) { return "pid " + std::to_string(pid); }

// The dxshim service's process, when it serves `target.pipe`; else why not.
std::optional<std::uint32_t> DxshimServing(NodeSystem& node, const ProofTarget& target,
                                           std::string& why) {
  const auto service = node.Service(target.dxshim_service);
  if (!service || !service->running) {
    why = "the " + target.dxshim_service + " service does not run";
    return std::nullopt;
  }
  const auto server = node.PipeServer(target.pipe);
  if (!server || *server != service->pid) {
    why = target.pipe + " is not served by the " + target.dxshim_service + " service (" +
          Pid(service->pid) + ")" + (server ? ": its server is " + Pid(*server) : "");
    return std::nullopt;
  }
  return service->pid;
}

}  // namespace

Proof CheckKubeletUses(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target) {
  Proof proof;
  std::string why;
  proof.dxshim_pid = DxshimServing(node, target, why);
  if (!proof.dxshim_pid) return {false, why, {}, std::nullopt};
  const auto answer = probe.Callers(target.pipe, why);
  if (!answer) return {false, "dxshim does not answer on " + target.pipe + ": " + why, {}, {}};
  if (answer->server_pid != *proof.dxshim_pid) {
    return {false,
            "what answered on " + target.pipe + " says it is " + Pid(answer->server_pid) +
                ", not the " + target.dxshim_service + " service's " + Pid(*proof.dxshim_pid),
            {},
            {}};
  }
  std::vector<ProcessInfo> kubelets;
  for (auto& process : node.Processes()) {
    if (FileNameOf(process.program) == "kubelet.exe") kubelets.push_back(process);
  }
  if (kubelets.empty()) return {false, "no kubelet.exe process runs", {}, proof.dxshim_pid};
  for (const auto& kubelet : kubelets) {
    const auto caller = std::find_if(answer->callers.begin(), answer->callers.end(),
                                     [&](const CriCaller& c) { return c.pid == kubelet.pid; });
    if (caller == answer->callers.end()) {
      return {false,
              "kubelet.exe (" + Pid(kubelet.pid) + ") has made no CRI call through " + target.pipe +
                  " (dxshim, " + Pid(*proof.dxshim_pid) + ")",
              {},
              proof.dxshim_pid};
    }
    proof.kubelets.push_back(*caller);
  }
  proof.ok = true;
  for (const auto& k : proof.kubelets) {
    proof.what += (proof.what.empty() ? "" : "; ") + std::string("kubelet.exe (") + Pid(k.pid) +
                  ") made " + std::to_string(k.calls) + " CRI call(s) through " + target.pipe;
  }
  proof.what +=
      ", served by the " + target.dxshim_service + " service (" + Pid(*proof.dxshim_pid) + ")";
  return proof;
}

Proof ProveKubeletUses(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target,
                       milliseconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  while (true) {
    Proof last = CheckKubeletUses(node, probe, target);
    if (last.ok || steady_clock::now() >= deadline) return last;
    node.Sleep(milliseconds(250));
  }
}

Proof ProveInstall(NodeSystem& node, DxshimProbe& probe, const ProofTarget& target,
                   bool service_only, milliseconds timeout,
                   const std::function<void(const std::string&)>& say) {
  if (!service_only) return ProveKubeletUses(node, probe, target, timeout);
  Proof proof = CheckKubeletUses(node, probe, target);
  if (proof.ok) {
    say("kubelet already uses dxshim: " + proof.what);
  } else if (proof.dxshim_pid) {
    say("not proven: " + proof.what + "; it will once kubelet is pointed at dxshim");
    proof.ok = true;  // what service-only installs is proven: dxshim serves and answers
  }
  return proof;
}

std::string LiveKubeletEndpoint(NodeSystem& node, const std::string& command_line) {
  KubeletFiles files;
  files.read = [&node](const std::string& path) { return node.ReadFile(path); };
  files.list = [&node](const std::string& folder) { return node.ListFiles(folder); };
  files.resolve = [&node](const std::string& path) { return NodePath(node, path); };
  files.separator = '\\';
  return KubeletEndpoint(SplitCommandLine(command_line), files).value;
}

}  // namespace dxshim::install
