#include "tests/install/fake_launchers.h"

#include <regex>

#include "shim/base/ascii_case.h"
#include "shim/install/kubelet/kubelet_launch.h"

namespace dxshim::install::test {
namespace {

// The pipe an endpoint names, as \\.\pipe\name in lower case (this fake's own reading).
std::string PipeOfEndpoint(std::string endpoint) {
  endpoint.erase(std::remove(endpoint.begin(), endpoint.end(), '"'), endpoint.end());
  const auto slash = endpoint.find_last_of("/\\");
  return ToLowerAscii("\\\\.\\pipe\\" + endpoint.substr(slash + 1));
}

std::optional<std::string> Match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return std::nullopt;
  return m[1].str();
}

// A containerd config's address in a top-level table, basic or literal string (this fake's own
// reading of the shapes the tests use).
std::optional<std::string> TableAddress(const std::string& toml, const std::string& table) {
  const auto at = toml.find("[" + table + "]");
  if (at == std::string::npos) return std::nullopt;
  const std::string rest = toml.substr(at, toml.find("\n[", at + 1) - at);
  auto value = Match(rest, R"re(address = ["']([^"'\r\n]*)["'])re");
  if (!value || value->empty()) return std::nullopt;
  if (rest.find("address = \"") != std::string::npos) {
    std::string decoded;
    for (std::size_t i = 0; i < value->size(); ++i) {
      if ((*value)[i] == '\\' && i + 1 < value->size()) ++i;
      decoded += (*value)[i];
    }
    value = decoded;
  }
  return ToLowerAscii(*value);
}

// The kubelet command line each launcher builds from what the installer may have changed.
std::string KubeletCommandLine(FakeNode& n, const std::string& service_line) {
  const auto at = ToLowerAscii(service_line).find("kubelet.exe");
  if (ToLowerAscii(service_line).find("nssm.exe") == std::string::npos) {
    return "C:\\k\\kubelet.exe" + service_line.substr(at + std::string("kubelet.exe").size());
  }
  const auto application = n.registry.at(FakeNode::RegistryName(kNssmKey, "Application")).data;
  const auto parameters = n.registry.at(FakeNode::RegistryName(kNssmKey, "AppParameters")).data;
  if (application.find("kubelet.exe") != std::string::npos) {
    return "\"" + application + "\" " + parameters;
  }
  if (parameters.find("StartKubelet.ps1") != std::string::npos) {  // sig-windows-tools: args first
    const auto args = Match(n.files.at(kFlagsFile), "KUBELET_KUBEADM_ARGS=\"([^\"]*)\"");
    return "C:\\k\\kubelet.exe  " + args.value_or("") +
           "  --config=/var/lib/kubelet/config.yaml  --hostname-override=win-node-1 ";
  }
  return "c:\\k\\kubelet.exe --v=2 --node-labels=kubernetes.azure.com/role=agent "
         "--container-runtime-endpoint=npipe://./pipe/containerd-containerd";
}

}  // namespace

std::string PipeOfKubelet(FakeNode& node, const std::string& command_line) {
  if (const auto flag =
          Match(command_line, R"re(--container-runtime-endpoint[= ]("[^"]*"|\S+))re")) {
    return PipeOfEndpoint(*flag);
  }
  if (const auto config = Match(command_line, R"re(--config=("[^"]*"|\S+))re")) {
    std::string path = *config;
    path.erase(std::remove(path.begin(), path.end(), '"'), path.end());
    const auto file = node.ReadFile(path);
    if (const auto value = file ? Match(*file, R"re(containerRuntimeEndpoint"?:\s*"?([^"\s,}]+))re")
                                : std::nullopt) {
      return PipeOfEndpoint(*value);
    }
  }
  return "unix:///run/containerd/containerd.sock";
}

std::optional<CriCallers> FakeProbe::Callers(const std::string& pipe, std::string& error) {
  const auto server = node_.PipeServer(pipe);
  const auto dxshim = node_.Service("dxshim");
  if (!server) {
    error = "nothing serves " + pipe;
    return std::nullopt;
  }
  if (!dxshim || dxshim->pid != *server) {
    error = "UNIMPLEMENTED: unknown service dxshim.v1.NodeStatus";  // containerd, say
    if (answer_as == 0) return std::nullopt;
  }
  CriCallers answer{answer_as != 0 ? answer_as : *server, {}};
  for (const auto& p : node_.processes) {
    if (p.program != "kubelet.exe" || PipeOfKubelet(node_, p.command_line) != ToLowerAscii(pipe)) {
      continue;
    }
    const auto since = std::max(node_.started_at[p.pid], node_.started_at[*server]) + 10;
    answer.callers.push_back({p.pid, "kubelet.exe", 3, since, node_.now_ms});
  }
  return answer;
}

bool FakeProbe::RuntimeAnswers(const std::string& pipe, std::chrono::milliseconds) {
  const auto server = node_.PipeServer(pipe);
  const auto dxshim = node_.Service("dxshim");
  if (!server) return false;
  if (!dxshim || dxshim->pid != *server) return true;  // containerd itself
  const auto runtime = Match(node_.files.at(kDxshimConfig), "runtime: (\\S+)");
  return runtime && node_.PipeServer(PipeOfEndpoint(*runtime)).has_value();
}

void PlayLaunchers(FakeNode& node) {
  node.on_start = [](FakeNode& n, const std::string& name) {
    const auto& state = n.services.at(name).state;
    if (name == "kubelet") {
      n.StartProcess("kubelet.exe", KubeletCommandLine(n, state.command_line));
    } else if (name == "rke2") {
      const auto endpoint =
          Match(n.files[kRke2Config] + n.files[std::string(kRke2Config) + ".d\\zz-dxshim.yaml"],
                "container-runtime-endpoint=([^\"\\s]+)");
      n.StartProcess("kubelet.exe",
                     "C:\\var\\lib\\rancher\\rke2\\bin\\kubelet.exe --container-runtime-endpoint=" +
                         endpoint.value_or("npipe:////./pipe/containerd-containerd"));
      n.pipes["\\\\.\\pipe\\containerd-containerd"] = state.pid;
    } else if (name == "containerd") {
      const std::string toml = n.files.at(kContainerdConfig);
      const auto grpc = TableAddress(toml, "grpc").value_or("\\\\.\\pipe\\containerd-containerd");
      n.pipes[grpc] = state.pid;
      n.pipes[TableAddress(toml, "ttrpc").value_or(grpc + ".ttrpc")] = state.pid;
    } else if (name == "dxshim") {
      const auto listen = Match(n.files.at(kDxshimConfig), "listen: (\\S+)");
      n.pipes[PipeOfEndpoint(listen.value())] = state.pid;
    }
  };
  node.on_stop = [](FakeNode& n, const std::string& name) {
    if (name == "kubelet" || name == "rke2") n.KillProgram("kubelet.exe");
  };
}

void BaseNode(FakeNode& node) {
  PlayLaunchers(node);
  node.files[kDxshimConfig] =
      "listen: npipe://./pipe/dxshim\r\nruntime: npipe://./pipe/containerd-containerd\r\n";
  // AgentBaker @06836ee staging/cse/windows/containerdtemplate.toml, its first tables.
  node.files[kContainerdConfig] =
      "root = \"C:\\\\ProgramData\\\\containerd\\\\root\"\r\n\r\n[grpc]\r\n"
      "  address = \"\\\\\\\\.\\\\pipe\\\\containerd-containerd\"\r\n\r\n[ttrpc]\r\n"
      "  address = \"\"\r\n";
  node.AddService("containerd", "\"C:\\Program Files\\containerd\\containerd.exe\" --run-service");
}

void EksShape(FakeNode& node) {
  node.files["C:\\ProgramData\\kubernetes\\kubelet-config.json"] =
      "{\"kind\": \"KubeletConfiguration\"}";
  // EKS's bootstrap service: no dependencies (research: the public bootstrap scripts set none).
  node.AddService("kubelet",
                  "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet "
                  "\"C:\\k\\kubelet.exe\" "
                  "--config=\"C:\\ProgramData\\kubernetes\\kubelet-config.json\" "
                  "--hostname-override=ip-10-0-0-1.ec2.internal "
                  "--container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" --v=1");
}

void KubeadmShape(FakeNode& node) {
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {
      "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      "-ExecutionPolicy Bypass -NoProfile C:\\k\\StartKubelet.ps1", true};
  node.files["C:\\k\\StartKubelet.ps1"] =
      "$FileContent = Get-Content -Path \"/var/lib/kubelet/kubeadm-flags.env\"\n"
      "$global:KubeletArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('\"')\n\n"
      "$cmd = \"C:\\k\\kubelet.exe  $global:KubeletArgs  --config=/var/lib/kubelet/config.yaml  "
      "--hostname-override=win-node-1 \"\nInvoke-Expression $cmd";
  node.files[kFlagsFile] =
      "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
      "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n";
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] =
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
  node.AddService("kubelet", "\"C:\\Program Files\\nssm\\nssm.exe\"", {"containerd"});
}

void AksShape(FakeNode& node) {
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {
      "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {"c:\\k\\kubeletstart.ps1",
                                                                      true};
  // UTF-16LE: AgentBaker ships it ASCII, but a script saved again by Windows PowerShell 5.1's
  // Out-File is UTF-16LE, and detection reads either.
  std::string script = "\xFF\xFE";
  for (const char ch : std::string(
           "$KubeletArgList = $Global:ClusterConfiguration.Kubernetes.Kubelet.ConfigArgs\r\n"
           "$KubeletArgList += @(\"--container-runtime-endpoint=npipe://./pipe/"
           "containerd-containerd\")\r\n")) {
    script += ch;
    script += '\0';
  }
  node.files["c:\\k\\kubeletstart.ps1"] = script;
  node.AddService("kubelet", "c:\\k\\nssm.exe", {"containerd"});
  node.AddService("kubeproxy", "c:\\k\\nssm.exe", {"Kubelet"});  // AgentBaker kubeletfunc.ps1
}

void Rke2Shape(FakeNode& node) {
  node.services.erase("containerd");  // rke2 runs containerd itself
  node.files[kRke2Config] =
      "server: https://10.0.0.1:9345\ntoken: secret\nnode-label:\n  - \"pool=gpu\"\n";
  node.AddService("rke2",
                  "\"C:\\usr\\local\\bin\\rke2.exe\" agent --config /etc/rancher/rke2/config.yaml");
}

std::string CapzFlagsFile() {
  return "KUBELET_KUBEADM_ARGS=\"--cloud-provider=external "
         "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --v=2\"\n";
}

void CapzNativeShape(FakeNode& node) {
  // image-builder @ae63061 images/capi/ansible/windows/roles/kubernetes/tasks/sc.yml
  node.files[kFlagsFile] = CapzFlagsFile();
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] = "kind: KubeletConfiguration\n";
  node.AddService("kubelet",
                  "\"c:\\k\\kube-log-runner.exe\" --log-file=C:/var/log/kubelet/kubelet.log "
                  "c:\\k\\kubelet.exe --windows-service --config=C:/var/lib/kubelet/config.yaml "
                  "--enforce-node-allocatable=\"\" "
                  "--container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" "
                  "--resolv-conf=\"\"",
                  {"containerd"});
}

void NssmKubeletShape(FakeNode& node) {
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {"C:\\k\\kubelet.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      "--container-runtime-endpoint npipe:////./pipe/containerd-containerd --v=2", true};
  node.AddService("kubelet", "C:\\k\\nssm.exe", {"containerd"});
}

void ConfigFileShape(FakeNode& node) {
  node.files["C:\\var\\lib\\kubelet\\config.json"] =
      "{\n  \"kind\": \"KubeletConfiguration\",\n  \"containerRuntimeEndpoint\": "
      "\"npipe://./pipe/containerd-containerd\"\n}";
  node.AddService("kubelet", "\"C:\\k\\kubelet.exe\" --config=C:\\var\\lib\\kubelet\\config.json",
                  {"containerd"});
}

const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{"eks", EksShape},
                                            {"kubeadm", KubeadmShape},
                                            {"aks", AksShape},
                                            {"rke2", Rke2Shape},
                                            {"capz", CapzNativeShape},
                                            {"nssm-kubelet", NssmKubeletShape},
                                            {"config-file", ConfigFileShape}};
  return shapes;
}

InstallOptions Options(std::vector<std::string>* said) {
  InstallOptions o;
  o.record_path = kRecord;
  o.plan.dxshim_config = kDxshimConfig;
  o.plan.dxshim_command_line = kDxshimCommand;
  o.plan.node_labels = {"dxshim.io/gpu.present=true", "dxshim.io/gpu.count=1"};
  o.proof_timeout = std::chrono::milliseconds(0);
  o.say = [said](const std::string& line) {
    if (said) said->push_back(line);
  };
  return o;
}

InstallPlan PlanOf(FakeNode& node, const std::string& mode) {
  const auto launch = FindKubeletLaunch(node);
  return PlanInstall(node, launch, ChooseMode(launch, mode), Options().plan);
}

std::vector<std::string> Described(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.Describe());
  return out;
}

UninstallOptions Undo(std::vector<std::string>* said) {
  UninstallOptions o;
  o.record_path = kRecord;
  o.say = [said](const std::string& line) {
    if (said) said->push_back(line);
  };
  return o;
}

Snapshot Take(const FakeNode& node) {
  Snapshot s{node.registry, node.files, {}};
  for (const auto& [name, svc] : node.services) {
    s.services[name] = {svc.state.command_line, svc.state.dependencies, svc.state.running};
  }
  return s;
}

std::string Describe(const Snapshot& a, const Snapshot& b) {
  std::string out;
  for (const auto& [path, bytes] : a.files) {
    const auto it = b.files.find(path);
    if (it == b.files.end())
      out += "file " + path + " only in the first\n";
    else if (it->second != bytes)
      out += "file " + path + ":\n" + bytes + "\n--- vs ---\n" + it->second + "\n";
  }
  for (const auto& [path, bytes] : b.files) {
    if (!a.files.count(path)) out += "file " + path + " only in the second\n";
  }
  for (const auto& [key, value] : a.registry) {
    const auto it = b.registry.find(key);
    if (it == b.registry.end() || it->second.data != value.data) out += "registry " + key + "\n";
  }
  for (const auto& [name, state] : a.services) {
    const auto it = b.services.find(name);
    if (it == b.services.end()) {
      out += "service " + name + " only in the first\n";
      continue;
    }
    const auto& [line, deps, running] = state;
    const auto& [line2, deps2, running2] = it->second;
    if (line != line2) out += "service " + name + " command line: " + line + " vs " + line2 + "\n";
    if (deps != deps2) out += "service " + name + " dependencies differ\n";
    if (running != running2)
      out += "service " + name + (running ? " runs" : " is stopped") + " in the first only\n";
  }
  for (const auto& [name, state] : b.services) {
    if (!a.services.count(name)) out += "service " + name + " only in the second\n";
  }
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace dxshim::install::test
