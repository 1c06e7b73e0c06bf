#include "shim/install/install_describe.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "shim/base/comma_list.h"

namespace dxshim::install {
namespace {

std::string Seconds(std::int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", static_cast<double>(ms) / 1000.0);
  return text;
}

}  // namespace

std::vector<std::string> DescribeLaunch(const KubeletLaunch& launch) {
  std::vector<std::string> lines;
  for (const auto& step : launch.chain) lines.push_back("  " + step);
  if (launch.launcher == Launcher::kUnknown) return lines;
  const auto& endpoint = launch.runtime_endpoint;
  lines.push_back("kubelet's launcher: " + std::string(LauncherName(launch.launcher)) +
                  "; runtime endpoint " + endpoint.value + " (" +
                  std::string(SettingPlaceName(endpoint.place)) +
                  (endpoint.path.empty() ? "" : ", " + endpoint.path) + ")");
  if (launch.hostname_override) lines.push_back("node name: " + launch.hostname_override->value);
  return lines;
}

std::vector<std::string> DescribePlan(const InstallPlan& plan, const std::vector<Step>& steps) {
  std::vector<std::string> lines;
  for (const auto& change : plan.changes) {
    lines.push_back("will change " + change.Describe() + ": " + change.why);
  }
  if (plan.create_dxshim) {
    lines.push_back("will create service " + plan.create_dxshim->name + ": " +
                    plan.create_dxshim->command_line);
  }
  for (const auto& note : plan.notes) lines.push_back(note);
  std::vector<std::string> stopped;
  for (const Step& step : steps) {
    if (step.kind == Step::Kind::kStop) stopped.push_back(step.service);
  }
  const std::string restarts = JoinList(stopped, ", ");
  if (!restarts.empty()) lines.push_back("will restart " + restarts + " only");
  for (auto& line : DescribeSteps(steps)) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> DescribeSteps(const std::vector<Step>& steps) {
  std::vector<std::string> lines{"steps, each journaled before and after it is applied:"};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    lines.push_back("  " + std::to_string(i + 1) + ". " + steps[i].Describe());
  }
  return lines;
}

std::optional<std::string> DescribeWindow(const std::vector<Step>& steps,
                                          const std::optional<Proof>& proof) {
  // The window opens at the begin of the first step that opens it...
  const auto opening = std::find_if(steps.begin(), steps.end(), [](const Step& step) {
    return step.opens_window && step.state != Step::State::kPending;
  });
  if (opening == steps.end()) return std::nullopt;
  const std::string from = "from the stop of service " + opening->service;
  // ...and closes at the end of the first done step from there on that closes it.
  for (auto step = opening; step != steps.end(); ++step) {
    if (!step->closes_window || step->state != Step::State::kDone) continue;
    return "kubelet had no runtime for " + Seconds(step->done_unix_ms - opening->begun_unix_ms) +
           " (" + from +
           (step->kind == Step::Kind::kWaitRuntime
                ? " to the first CRI call answered through " + step->pipe
                : " to its start") +
           ")";
  }
  if (!proof) return std::nullopt;
  // An endpoint switch restarts kubelet itself: down until its new process calls dxshim.
  std::optional<std::int64_t> first;
  for (const auto& kubelet : proof->kubelets) {
    if (kubelet.first_call_unix_ms >= opening->begun_unix_ms &&
        (!first || kubelet.first_call_unix_ms < *first)) {
      first = kubelet.first_call_unix_ms;
    }
  }
  if (!first) return std::nullopt;
  return "kubelet had no runtime for " + Seconds(*first - opening->begun_unix_ms) + " (" + from +
         " to kubelet's new process's first CRI call through dxshim)";
}

std::string LabelCommand(const std::string& node_name, const std::vector<std::string>& labels) {
  std::string list;
  for (const auto& label : labels) list += " " + label;
  return "kubelet applies --node-labels when it registers the node; a node already registered "
         "gets the GPU labels with: kubectl label node " +
         node_name + " --overwrite" + list;
}

std::optional<std::string> BootstrapSetting(const KubeletLaunch& launch,
                                            const std::string& endpoint) {
  const std::string flag = "--container-runtime-endpoint=" + endpoint;
  switch (launch.launcher) {
    case Launcher::kNssmKubeadmScript:
      return "kubeadm's JoinConfiguration: nodeRegistration.criSocket: " + endpoint +
             " (kubeadm writes it where kubelet reads it: kubeadm-flags.env, or with "
             "NodeLocalCRISocket its instance configuration)";
    case Launcher::kNativeService:
      return "the kubelet service's command line: " + flag +
             " (sc.exe config kubelet binPath= ...); on a Cluster API image whose "
             "RestartKubelet.ps1 rebuilds the service from kubeadm-flags.env, "
             "nodeRegistration.criSocket: " +
             endpoint +
             " and RestartKubelet.ps1 after kubeadm join, then sc.exe config kubelet depend= "
             "containerd/dxshim (RestartKubelet.ps1 makes it depend on containerd alone); on EKS, "
             "Start-EKSBootstrap.ps1 -KubeletExtraArgs \"" +
             flag + "\"";
    case Launcher::kNssmKubelet:
      return "NSSM's AppParameters of the kubelet service: " + flag;
    case Launcher::kRke2:
      return "rke2's config.yaml before rke2 first starts: kubelet-arg: [\"" + flag.substr(2) +
             "\"]";
    case Launcher::kNssmAksScript:
    case Launcher::kUnknown:
      break;
  }
  return std::nullopt;
}

}  // namespace dxshim::install
