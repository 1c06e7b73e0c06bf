// How this node's kubelet is launched, and where each setting dxshim cares about is read from:
// the runtime endpoint, the node name, the node labels. One reader for `dxshim install`,
// `uninstall` and (later) `doctor`. The launchers, from the distributions' public sources
// (deploy/windows/DISTRIBUTIONS.md cites them):
//   - a native service whose command line runs kubelet.exe (GKE, EKS through
//     EKS-WindowsServiceHost.exe, CAPZ's sc.exe variant);
//   - an NSSM service (AKS, kubeadm's PrepareNode.ps1, CAPZ): nssm.exe reads the program and its
//     arguments from the service's Parameters key at each start; the program is kubelet.exe
//     itself or PowerShell running a script: kubeadm's StartKubelet.ps1 (flags from
//     kubeadm-flags.env) or AKS's kubeletstart.ps1 (the endpoint written in the script);
//   - the rke2 service, which runs kubelet and containerd as its children (config.yaml);
//   - unknown: nothing is changed and the setting to change is named.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/install/edit/command_line.h"  // FileNameOf, for the callers
#include "shim/install/system/node_system.h"

namespace dxshim::install {

enum class Launcher {
  kNativeService,
  kNssmKubelet,
  kNssmKubeadmScript,
  kNssmAksScript,
  kRke2,
  kUnknown
};
std::string_view LauncherName(Launcher launcher);

// Where a kubelet setting comes from, most binding first as kubelet applies them: a command-line
// flag beats the --config-dir drop-ins, which beat the --config file.
enum class SettingPlace {
  kServiceCommandLine,  // the service's ImagePath (native service)
  kNssmParameters,      // NSSM's AppParameters registry value
  kKubeadmFlagsFile,    // KUBELET_KUBEADM_ARGS in kubeadm-flags.env
  kRke2Config,          // a `kubelet-arg` item in rke2's config.yaml
  kScript,              // written into a launcher script the distribution owns
  kConfigDropIn,        // a file in --config-dir
  kConfigFile,          // the --config file (YAML or JSON)
  kLauncherDefault,     // set nowhere the operator can see: the launcher's own (rke2's)
  kDefault,             // set nowhere: kubelet's default, which no Windows node can use
};
std::string_view SettingPlaceName(SettingPlace place);

struct Setting {
  std::string value;
  SettingPlace place = SettingPlace::kDefault;
  std::string path;  // the file, or the service / registry key, that holds it
};

struct KubeletLaunch {
  Launcher launcher = Launcher::kUnknown;
  std::string service;             // the service that runs kubelet: "kubelet", or "rke2"
  std::string command_line;        // that service's command line
  std::vector<std::string> chain;  // how kubelet is reached, one step each, for messages
  std::string why_unknown;         // for kUnknown: what was found instead

  // Where kubelet's flags live (each launcher has one): for kNativeService the service's command
  // line, whose flags start at word `first_flag`; for kNssmKubelet the AppParameters value; for
  // kNssmKubeadmScript the flags file; for kRke2 the config file.
  std::string flags_path;
  std::size_t first_flag = 0;
  std::string nssm_key;  // HKLM key of NSSM's Parameters
  std::string script;    // the PowerShell script NSSM runs, when it does
  std::string script_text;

  std::optional<std::string> config_file;  // --config
  std::optional<std::string> config_dir;   // --config-dir
  std::string containerd_service;  // the service that runs containerd ("containerd" or "rke2")

  Setting runtime_endpoint;
  // The endpoint kubelet's --config file and drop-ins give, flag or not: what a kubelet started
  // again without the flag would use (kubeadm 1.34 and later write it there: NodeLocalCRISocket).
  std::optional<Setting> config_endpoint;
  std::optional<Setting> hostname_override;
  std::optional<Setting> node_labels;  // --node-labels, where the launcher keeps kubelet's flags
};

// Reads the node. Throws NodeError only when the node itself cannot be read; a launcher it does
// not know is Launcher::kUnknown with why_unknown said.
KubeletLaunch FindKubeletLaunch(NodeSystem& node);

// containerd's pipe on Windows (containerd defaults/defaults_windows.go), which every launcher
// read names explicitly: kubelet has no Windows default of its own (its KubeletConfiguration
// default is kKubeletDefaultEndpoint on every OS, pkg/kubelet/apis/config/v1beta1/defaults.go).
inline constexpr char kContainerdPipeEndpoint[] = "npipe://./pipe/containerd-containerd";
inline constexpr char kKubeletDefaultEndpoint[] = "unix:///run/containerd/containerd.sock";
// Where kubeadm writes kubelet's flags on a Windows node (its kubelet run directory on the system
// drive); sig-windows-tools' StartKubelet.ps1 and image-builder's RestartKubelet.ps1 read it.
inline constexpr char kKubeadmFlagsPath[] = "\\var\\lib\\kubelet\\kubeadm-flags.env";
// Where kubeadm 1.34 and later (NodeLocalCRISocket) keep the node's CRI socket, one line
// `containerRuntimeEndpoint: "<criSocket>"` (cmd/kubeadm/app/phases/kubelet/config.go,
// WriteInstanceConfigToDisk), patched into config.yaml each time kubeadm writes it (join,
// `kubeadm upgrade node`: WriteConfigToDisk).
inline constexpr char kKubeadmInstanceConfigPath[] = "\\var\\lib\\kubelet\\instance-config.yaml";

// A path as the node names it: %VARIABLES% expanded, and a path rooted without a drive
// ("/var/lib/kubelet/config.yaml", as kubeadm's scripts write it) put on the system drive, and
// forward slashes turned into backslashes (one spelling per file, for the install record).
std::string NodePath(NodeSystem& node, const std::string& path);

// A CRI endpoint as the pipe path it names, lower case, for comparisons: npipe://./pipe/x,
// npipe:////./pipe/x and \\.\pipe\x all give "\\.\pipe\x". Other endpoints: themselves.
std::string PipePathOf(std::string_view endpoint);

}  // namespace dxshim::install
