#include "shim/install/kubelet/kubelet_launch.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "shim/base/ascii_case.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/kubelet_flags.h"
#include "shim/install/edit/rke2_config.h"
#include "shim/install/edit/text_encoding.h"

namespace dxshim::install {
namespace {

constexpr char kServicesKey[] = "SYSTEM\\CurrentControlSet\\Services\\";
// rke2's default configuration file on Windows (rancher/rke2 docs: the same folder as on Linux,
// under C:\).
constexpr char kRke2Config[] = "C:\\etc\\rancher\\rke2\\config.yaml";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         ToLowerAscii(text.substr(text.size() - suffix.size())) == suffix;
}

// The flags kubelet reads that dxshim cares about, found in one list of words.
struct FlagSet {
  std::optional<std::string> endpoint, config, config_dir, hostname, node_labels;
};

FlagSet ReadFlags(const std::vector<Word>& words, std::size_t first) {
  FlagSet flags;
  const auto get = [&](std::string_view name) -> std::optional<std::string> {
    const auto found = FindFlag(words, name, first);
    return found ? std::optional(found->value) : std::nullopt;
  };
  flags.endpoint = get("container-runtime-endpoint");
  flags.config = get("config");
  flags.config_dir = get("config-dir");
  flags.hostname = get("hostname-override");
  flags.node_labels = get("node-labels");
  return flags;
}

// PowerShell's $env:NAME in a value (a double-quoted string expands it: image-builder's
// StartKubelet.ps1 writes "--config=$env:SYSTEMDRIVE/var/lib/kubelet/config.yaml") as %NAME%,
// which the node expands (NodePath).
std::string EnvironmentAsPercent(std::string value) {
  for (auto at = ToLowerAscii(value).find("$env:"); at != std::string::npos;
       at = ToLowerAscii(value).find("$env:", at)) {
    std::size_t end = at + 5;
    while (end < value.size() &&
           (std::isalnum(static_cast<unsigned char>(value[end])) || value[end] == '_')) {
      ++end;
    }
    if (end == at + 5) return value;  // not a variable's name: left for the caller to refuse
    const std::string name = value.substr(at + 5, end - at - 5);
    value.replace(at, end - at, "%" + name + "%");
    at += name.size() + 2;
  }
  return value;
}

// `--name=value` written literally in a script: the value up to whitespace or a quote, its
// $env:NAME as %NAME%; nullopt when absent or computed by the script (any other $...).
std::optional<std::string> ScriptFlag(std::string_view script, std::string_view name) {
  const std::string needle = "--" + std::string(name) + "=";
  const auto at = ToLowerAscii(script).find(ToLowerAscii(needle));
  if (at == std::string::npos) return std::nullopt;
  std::size_t end = at + needle.size();
  while (end < script.size() && !std::isspace(static_cast<unsigned char>(script[end])) &&
         script[end] != '"' && script[end] != '\'' && script[end] != '`') {
    ++end;
  }
  std::string value = EnvironmentAsPercent(
      std::string(script.substr(at + needle.size(), end - at - needle.size())));
  if (value.empty() || value.find('$') != std::string::npos) return std::nullopt;
  return value;
}

}  // namespace

std::string NodePath(NodeSystem& node, const std::string& path) {
  std::string out = node.ExpandEnvironment(path);
  // "/var/lib/kubelet/config.yaml" (kubeadm's scripts) is on the system drive, whatever the
  // current drive of the process reading it.
  const bool rooted = !out.empty() && (out[0] == '/' || out[0] == '\\') &&
                      !(out.size() > 1 && (out[1] == '/' || out[1] == '\\'));
  if (rooted) out = node.ExpandEnvironment("%SystemDrive%") + out;
  if (out.rfind("\\\\?\\", 0) != 0) std::replace(out.begin(), out.end(), '/', '\\');
  return out;
}

namespace {

std::string ReadText(NodeSystem& node, const std::string& path, const std::string& what) {
  const auto text = node.ReadFile(NodePath(node, path));
  if (!text) throw NodeError(what + " " + path + " does not exist");
  return *text;
}

// kubeadm's flags file, KUBELET_KUBEADM_ARGS read: a file that cannot be read that way is a node
// that cannot be read (NodeError, as every other failure of FindKubeletLaunch), naming the file.
KubeadmFlags KubeadmFlagsOf(NodeSystem& node, const std::string& path) {
  const std::string text = ReadText(node, path, "kubeadm's flags file");
  std::optional<KubeadmFlags> flags;
  try {
    flags = ReadKubeadmFlags(text);
  } catch (const EditError& e) {
    throw NodeError(path + ": " + e.what());
  }
  if (!flags) throw NodeError(path + " has no KUBELET_KUBEADM_ARGS line");
  return *flags;
}

void ApplyFlags(const FlagSet& flags, SettingPlace place, const std::string& path,
                KubeletLaunch& launch) {
  if (flags.endpoint) launch.runtime_endpoint = {*flags.endpoint, place, path};
  if (flags.config) launch.config_file = *flags.config;
  if (flags.config_dir) launch.config_dir = *flags.config_dir;
  if (flags.hostname) launch.hostname_override = Setting{*flags.hostname, place, path};
  if (flags.node_labels) launch.node_labels = Setting{*flags.node_labels, place, path};
}

void FromNssm(NodeSystem& node, KubeletLaunch& launch) {
  launch.nssm_key = std::string(kServicesKey) + launch.service + "\\Parameters";
  const auto application = node.ReadRegistry(launch.nssm_key, "Application");
  if (!application) {
    launch.why_unknown = "the kubelet service runs nssm.exe, but HKLM\\" + launch.nssm_key +
                         " has no Application value";
    return;
  }
  const auto parameters = node.ReadRegistry(launch.nssm_key, "AppParameters");
  const std::string args = parameters ? node.ExpandEnvironment(parameters->data) : "";
  const std::string program = node.ExpandEnvironment(application->data);
  launch.chain.push_back("NSSM runs " + program + (args.empty() ? "" : " " + args));
  const auto name = FileNameOf(program);
  if (name == "kubelet.exe") {
    launch.launcher = Launcher::kNssmKubelet;
    launch.flags_path = "HKLM\\" + launch.nssm_key + "\\AppParameters";
    launch.first_flag = 0;
    ApplyFlags(ReadFlags(SplitArguments(args), 0), SettingPlace::kNssmParameters, launch.flags_path,
               launch);
    return;
  }
  if (name != "powershell.exe" && name != "pwsh.exe") {
    launch.why_unknown = "NSSM runs " + program + ", which is neither kubelet.exe nor PowerShell";
    return;
  }
  // The script: -File's argument, else the first word naming a .ps1 file.
  const auto words = SplitCommandLine("powershell.exe " + args);
  for (std::size_t i = 1; i < words.size() && launch.script.empty(); ++i) {
    if (ToLowerAscii(words[i].text) == "-file" && i + 1 < words.size())
      launch.script = words[i + 1].text;
    if (EndsWith(words[i].text, ".ps1")) launch.script = words[i].text;
  }
  if (launch.script.empty()) {
    launch.why_unknown = "NSSM runs PowerShell without a script file: " + args;
    return;
  }
  launch.script_text = TextOf(ReadText(node, launch.script, "the kubelet script"));
  const std::string lower = ToLowerAscii(launch.script_text);
  if (lower.find("kubeadm-flags.env") != std::string::npos) {
    launch.launcher = Launcher::kNssmKubeadmScript;
    launch.flags_path = NodePath(node, kKubeadmFlagsPath);
    launch.chain.push_back(launch.script + " reads " + launch.flags_path);
  }
  // Flags the script writes itself come after the ones it reads (kubelet keeps the last).
  FlagSet written;
  written.endpoint = ScriptFlag(launch.script_text, "container-runtime-endpoint");
  written.config = ScriptFlag(launch.script_text, "config");
  written.config_dir = ScriptFlag(launch.script_text, "config-dir");
  written.hostname = ScriptFlag(launch.script_text, "hostname-override");
  if (launch.launcher == Launcher::kNssmKubeadmScript) {
    const KubeadmFlags kubeadm = KubeadmFlagsOf(node, launch.flags_path);
    ApplyFlags(ReadFlags(SplitKubeadmArgs(kubeadm.args), 0), SettingPlace::kKubeadmFlagsFile,
               launch.flags_path, launch);
  } else if (written.endpoint) {
    launch.launcher = Launcher::kNssmAksScript;
    launch.chain.push_back(launch.script + " starts kubelet with its own runtime endpoint");
  } else {
    launch.why_unknown = "NSSM runs " + launch.script +
                         ", which neither reads kubeadm-flags.env nor sets "
                         "--container-runtime-endpoint";
    return;
  }
  ApplyFlags(written, SettingPlace::kScript, launch.script, launch);
}

// rke2's config file and its drop-ins, in the order rke2 reads them (rke2_config.h).
std::vector<Rke2ConfigFile> Rke2Files(NodeSystem& node, const std::string& config) {
  std::vector<Rke2ConfigFile> files;
  if (auto text = node.ReadFile(config)) files.push_back({config, std::move(*text)});
  const std::string folder = config + ".d";
  for (const auto& name : node.ListFiles(folder)) {
    if (!EndsWith(name, ".yaml") && !EndsWith(name, ".yml")) continue;
    std::string path = folder;
    path += '\\';
    path += name;
    if (auto text = node.ReadFile(path)) files.push_back({std::move(path), std::move(*text)});
  }
  return files;
}

void FromRke2(NodeSystem& node, KubeletLaunch& launch) {
  launch.launcher = Launcher::kRke2;
  launch.containerd_service = "rke2";
  launch.flags_path = kRke2Config;
  const auto words = SplitCommandLine(node.ExpandEnvironment(launch.command_line));
  if (const auto config = FindFlag(words, "config", 1)) launch.flags_path = config->value;
  launch.flags_path = NodePath(node, launch.flags_path);
  launch.chain.push_back("the rke2 service runs kubelet with the kubelet-arg items of " +
                         launch.flags_path + " and its drop-ins (" + launch.flags_path + ".d)");
  // Without an item, rke2 gives kubelet its embedded containerd's pipe (k3s
  // pkg/agent/config/config_windows.go).
  launch.runtime_endpoint = {"npipe:////./pipe/containerd-containerd",
                             SettingPlace::kLauncherDefault, ""};
  std::vector<std::string> items;
  std::vector<Rke2ConfigFile> files;
  try {
    files = Rke2Files(node, launch.flags_path);
    items = Rke2KubeletArgs(files);
  } catch (const EditError& e) {
    throw NodeError(e.what());
  }
  FlagSet flags;
  flags.endpoint = Rke2KubeletFlag(items, "container-runtime-endpoint");
  flags.config = Rke2KubeletFlag(items, "config");
  flags.hostname = Rke2KubeletFlag(items, "hostname-override");
  ApplyFlags(flags, SettingPlace::kRke2Config, launch.flags_path, launch);
  if (!flags.hostname) {
    if (const auto name = Rke2Setting(files, "node-name")) {
      launch.hostname_override = Setting{*name, SettingPlace::kRke2Config, launch.flags_path};
    }
  }
}

// The config file and drop-ins, for what no flag set (kubelet: flags win over both).
void FromConfigFiles(NodeSystem& node, KubeletLaunch& launch) {
  const bool endpoint_from_flag = launch.runtime_endpoint.place != SettingPlace::kDefault &&
                                  launch.runtime_endpoint.place != SettingPlace::kLauncherDefault;
  const auto consider = [&](const std::string& named, SettingPlace place) {
    const std::string path = NodePath(node, named);
    const auto text = node.ReadFile(path);
    if (!text) throw NodeError("kubelet's config file " + path + " does not exist");
    try {
      if (auto value = ReadTopLevelString(*text, "containerRuntimeEndpoint")) {
        launch.config_endpoint = Setting{*value, place, path};
        if (!endpoint_from_flag) launch.runtime_endpoint = *launch.config_endpoint;
      }
    } catch (const NodeError&) {
      throw;
    } catch (const std::exception& e) {
      throw NodeError("kubelet's config file " + path + ": " + e.what());
    }
  };
  // Applied in order, later ones override: the file, then the drop-ins by name (kubelet sorts
  // the *.conf files of --config-dir).
  if (launch.config_file) consider(*launch.config_file, SettingPlace::kConfigFile);
  if (launch.config_dir) {
    const std::string dir = NodePath(node, *launch.config_dir);
    for (const auto& name : node.ListFiles(dir)) {
      if (!EndsWith(name, ".conf")) continue;
      std::string path = dir;
      path += '\\';
      path += name;
      consider(path, SettingPlace::kConfigDropIn);
    }
  }
}

}  // namespace

std::string_view LauncherName(Launcher launcher) {
  switch (launcher) {
    case Launcher::kNativeService:
      return "a service that runs kubelet.exe";
    case Launcher::kNssmKubelet:
      return "NSSM running kubelet.exe";
    case Launcher::kNssmKubeadmScript:
      return "NSSM running kubeadm's StartKubelet.ps1";
    case Launcher::kNssmAksScript:
      return "NSSM running AKS's kubeletstart.ps1";
    case Launcher::kRke2:
      return "the rke2 service";
    case Launcher::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view SettingPlaceName(SettingPlace place) {
  switch (place) {
    case SettingPlace::kServiceCommandLine:
      return "the service's command line";
    case SettingPlace::kNssmParameters:
      return "NSSM's AppParameters";
    case SettingPlace::kKubeadmFlagsFile:
      return "KUBELET_KUBEADM_ARGS";
    case SettingPlace::kRke2Config:
      return "rke2's kubelet-arg";
    case SettingPlace::kScript:
      return "the launcher script";
    case SettingPlace::kConfigDropIn:
      return "a --config-dir drop-in";
    case SettingPlace::kConfigFile:
      return "the --config file";
    case SettingPlace::kLauncherDefault:
      return "the launcher's own default";
    case SettingPlace::kDefault:
      break;
  }
  return "kubelet's default";
}

std::string PipePathOf(std::string_view endpoint) {
  std::string text(endpoint);
  const bool npipe = ToLowerAscii(text).rfind("npipe:", 0) == 0;
  if (!npipe && text.rfind("\\\\", 0) != 0) return text;
  if (npipe) text = text.substr(6);
  std::replace(text.begin(), text.end(), '/', '\\');
  const auto start = text.find_first_not_of('\\');
  return "\\\\" + ToLowerAscii(start == std::string::npos ? "" : text.substr(start));
}

KubeletLaunch FindKubeletLaunch(NodeSystem& node) {
  KubeletLaunch launch;
  launch.containerd_service = "containerd";
  launch.runtime_endpoint = {kKubeletDefaultEndpoint, SettingPlace::kDefault, ""};
  if (const auto kubelet = node.Service("kubelet")) {
    launch.service = "kubelet";
    launch.command_line = kubelet->command_line;
    launch.chain.push_back("service kubelet runs " + kubelet->command_line);
    const auto words = SplitCommandLine(node.ExpandEnvironment(kubelet->command_line));
    const std::string program = words.empty() ? "" : FileNameOf(words[0].text);
    if (program == "nssm.exe") {
      FromNssm(node, launch);
    } else {
      // kubelet.exe itself, or a service host that runs it (EKS-WindowsServiceHost.exe).
      const auto first = KubeletFlagsStart(words);
      if (!first) {
        launch.why_unknown = "the kubelet service runs " +
                             (words.empty() ? "nothing" : words[0].text) +
                             ", and kubelet.exe is not on its command line";
      } else {
        launch.launcher = Launcher::kNativeService;
        launch.flags_path = "service kubelet";
        launch.first_flag = *first;
        ApplyFlags(ReadFlags(words, *first), SettingPlace::kServiceCommandLine, launch.flags_path,
                   launch);
      }
    }
  } else if (const auto rke2 = node.Service("rke2")) {
    launch.service = "rke2";
    launch.command_line = rke2->command_line;
    launch.chain.push_back("service rke2 runs " + rke2->command_line);
    FromRke2(node, launch);
  } else {
    launch.why_unknown = "there is neither a kubelet service nor an rke2 service";
  }
  if (launch.launcher != Launcher::kUnknown) FromConfigFiles(node, launch);
  return launch;
}

}  // namespace dxshim::install
