// Windows: the kubelet service as its launcher starts it (the service's ImagePath in the
// registry, NSSM's parameters, kubeadm's flags file, rke2's config:
// shim/install/kubelet/kubelet_launch.h) and every running kubelet.exe by its own command line,
// each with the config files it names.
#include "shim/doctor/kubelet_check.h"
#include "shim/install/kubelet/kubelet_launch.h"
#include "shim/install/kubelet/kubelet_proof.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim::doctor {

KubeletSearch FindKubelets() {
  KubeletSearch search;
  const auto node = windows::MakeWindowsNodeSystem();
  try {
    const auto launch = install::FindKubeletLaunch(*node);
    if (launch.launcher != install::Launcher::kUnknown) {
      const auto& setting = launch.runtime_endpoint;
      std::string where(install::SettingPlaceName(setting.place));
      if (setting.place == install::SettingPlace::kServiceCommandLine) {
        where = "its ImagePath in HKLM\\SYSTEM\\CurrentControlSet\\Services\\" + launch.service;
      } else if (!setting.path.empty()) {
        where += " " + setting.path;
      }
      search.seen.push_back({"the " + launch.service + " service (" +
                                 std::string(install::LauncherName(launch.launcher)) +
                                 ") at its next start",
                             setting.value, where});
    } else if (!launch.why_unknown.empty() && launch.service.empty()) {
      // No kubelet service: the processes below may still say.
    } else if (!launch.why_unknown.empty()) {
      search.problems.push_back("the " + launch.service + " service: " + launch.why_unknown);
    }
  } catch (const std::exception& e) {
    search.problems.push_back(std::string("the kubelet service: ") + e.what());
  }
  for (const auto& process : node->Processes()) {
    if (install::FileNameOf(process.program) != "kubelet.exe") continue;
    const std::string who = "kubelet.exe (pid " + std::to_string(process.pid) + ")";
    if (process.command_line.empty()) {
      search.problems.push_back(who + ": its command line cannot be read");
      continue;
    }
    try {
      search.seen.push_back(
          {who, install::LiveKubeletEndpoint(*node, process.command_line), "its command line"});
    } catch (const std::exception& e) {
      search.problems.push_back(who + ": " + e.what());
    }
  }
  return search;
}

}  // namespace dxshim::doctor
