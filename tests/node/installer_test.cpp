// dxshim install / uninstall (shim/node/installer.h) on in-memory nodes shaped like each launcher
// the distributions use (deploy/windows/DISTRIBUTIONS.md cites their sources). FakeNode stands in
// for the Windows registry and service manager; node_install_test.sh runs the same code against
// wine's real ones.
#include "shim/node/installer.h"

#include <gtest/gtest.h>

#include "shim/node/config_file_edit.h"
#include "shim/node/containerd_config.h"
#include "shim/node/install_record.h"
#include "shim/node/kubelet_flags.h"
#include "shim/node/rke2_config.h"
#include "tests/node/fake_node.h"

namespace dxshim::node::test {
namespace {

constexpr char kRecord[] = "C:\\ProgramData\\dxshim\\install-record.json";
constexpr char kDxshimConfig[] = "C:\\ProgramData\\dxshim\\dxshim.yaml";
constexpr char kDxshimCommand[] =
    "\"C:\\Program Files\\dxshim\\dxshim.exe\" serve --config "
    "\"C:\\ProgramData\\dxshim\\dxshim.yaml\"";
constexpr char kNssmKey[] = "SYSTEM\\CurrentControlSet\\Services\\kubelet\\Parameters";
constexpr char kHealthz[] = "127.0.0.1:10248/healthz";
constexpr char kContainerdConfig[] = "C:\\Program Files\\containerd\\config.toml";

// Kubelet's command line as each launcher builds it from what install may have changed.
std::string KubeletCommandLine(FakeNode& node) {
  const auto& service = node.services.at("kubelet").state;
  if (service.command_line.find("nssm.exe") == std::string::npos) {
    // Native: the service's own command line (EKS: after EKS-WindowsServiceHost.exe kubelet).
    const auto at = service.command_line.find("\"C:\\k\\kubelet.exe\"");
    return at == std::string::npos ? service.command_line : service.command_line.substr(at);
  }
  const std::string args = node.registry.at(FakeNode::RegistryName(kNssmKey, "AppParameters")).data;
  if (args.find("StartKubelet.ps1") != std::string::npos) {
    const auto flags = ReadKubeadmFlags(node.files.at("C:\\var\\lib\\kubelet\\kubeadm-flags.env"));
    return "C:\\k\\kubelet.exe " + flags->args + " --config=/var/lib/kubelet/config.yaml";
  }
  return "c:\\k\\kubelet.exe --v=2 "
         "--container-runtime-endpoint=npipe://./pipe/containerd-containerd";
}

// Services start and stop their programs; kubelet answers /healthz while it runs.
void PlayLaunchers(FakeNode& node) {
  node.on_start = [](FakeNode& n, const std::string& name) {
    const auto pid = n.services.at(name).state.pid;
    if (name == "kubelet") {
      n.processes.push_back({pid, "kubelet.exe", KubeletCommandLine(n)});
      n.http[kHealthz] = {200, "ok"};
    } else if (name == "rke2") {
      const auto endpoint = ReadRke2KubeletArg(n.files["C:\\etc\\rancher\\rke2\\config.yaml"],
                                               "container-runtime-endpoint");
      n.processes.push_back(
          {pid + 1, "kubelet.exe",
           "C:\\var\\lib\\rancher\\rke2\\bin\\kubelet.exe --container-runtime-endpoint=" +
               endpoint.value_or("npipe:////./pipe/containerd-containerd")});
      n.http[kHealthz] = {200, "ok"};
    } else if (name == "containerd") {
      const auto pipe = ReadGrpcAddress(n.files.at(kContainerdConfig));
      n.pipes[FakeNode::Lower(pipe.value_or("\\\\.\\pipe\\containerd-containerd"))] = pid;
    } else if (name == "dxshim") {
      const auto listen = ReadTopLevelString(n.files.at(kDxshimConfig), "listen").value();
      std::string pipe = "\\\\.\\pipe\\" + listen.substr(listen.rfind('/') + 1);
      n.pipes[FakeNode::Lower(pipe)] = pid;
      n.http["127.0.0.1:9464/metrics"] = {200,
                                          "dxshim_pipe_clients_total{program=\"kubelet.exe\"} 2\n"};
    }
  };
  node.on_stop = [](FakeNode& n, const std::string& name) {
    if (name == "kubelet" || name == "rke2") {
      n.KillProgram("kubelet.exe");
      n.http.erase(kHealthz);
    }
    std::erase_if(n.pipes, [&](const auto& p) { return p.second == 0; });
    for (auto it = n.pipes.begin(); it != n.pipes.end();) {
      bool stopped = true;
      for (const auto& [s, svc] : n.services) {
        if (svc.state.pid == it->second) stopped = false;
      }
      it = stopped ? n.pipes.erase(it) : std::next(it);
    }
  };
}

InstallOptions Options(std::vector<std::string>* said = nullptr) {
  InstallOptions o;
  o.record_path = kRecord;
  o.plan.dxshim_config = kDxshimConfig;
  o.dxshim_command_line = kDxshimCommand;
  o.plan.node_labels = {"dxshim.io/gpu.present=true", "dxshim.io/gpu.count=1"};
  o.proof_timeout = std::chrono::milliseconds(0);
  o.say = [said](const std::string& line) {
    if (said) said->push_back(line);
  };
  return o;
}

UninstallOptions Undo() {
  UninstallOptions o;
  o.record_path = kRecord;
  return o;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

void BaseNode(FakeNode& node) {
  PlayLaunchers(node);
  node.files[kDxshimConfig] =
      "listen: npipe://./pipe/dxshim\r\nruntime: "
      "npipe://./pipe/containerd-containerd\r\nmetrics-listen: 127.0.0.1:9464\r\n";
  node.files[kContainerdConfig] =
      "version = 2\n\n[grpc]\n  address = \"\\\\\\\\.\\\\pipe\\\\containerd-containerd\"\n";
  node.AddService("containerd", "\"C:\\Program Files\\containerd\\containerd.exe\" --run-service");
}

// Everything the installer may touch, for byte-for-byte comparisons.
struct Snapshot {
  std::map<std::string, RegistryString> registry;
  std::map<std::string, std::string> files;
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> services;
  bool operator==(const Snapshot&) const = default;
};
Snapshot Take(const FakeNode& node) {
  Snapshot s{node.registry, node.files, {}};
  for (const auto& [name, svc] : node.services) {
    s.services[name] = {svc.state.command_line, svc.state.dependencies};
  }
  return s;
}

// EKS's shape: EKS-WindowsServiceHost.exe runs kubelet.exe with its flags on the service's line.
constexpr char kEksLine[] =
    "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet \"C:\\k\\kubelet.exe\" "
    "--config=\"C:\\ProgramData\\kubernetes\\kubelet-config.json\" "
    "--hostname-override=ip-10-0-0-1.ec2.internal "
    "--container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" --v=1";

TEST(NodeInstall, NativeServiceGetsTheFlagOnItsCommandLineAndProvesIt) {
  FakeNode node;
  BaseNode(node);
  node.files["C:\\ProgramData\\kubernetes\\kubelet-config.json"] =
      "{\"kind\": \"KubeletConfiguration\"}";
  node.AddService("kubelet", kEksLine, {"containerd"});
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  ASSERT_EQ(Install(node, Options(&said)), kInstalled) << Joined(said);
  const auto& kubelet = node.service("kubelet");
  EXPECT_EQ(kubelet.state.command_line,
            "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet "
            "\"C:\\k\\kubelet.exe\" "
            "--config=\"C:\\ProgramData\\kubernetes\\kubelet-config.json\" "
            "--hostname-override=ip-10-0-0-1.ec2.internal "
            "--container-runtime-endpoint=\"npipe://./pipe/dxshim\" --v=1 "
            "--node-labels=dxshim.io/gpu.present=true,dxshim.io/gpu.count=1");
  EXPECT_EQ(kubelet.state.dependencies, (std::vector<std::string>{"containerd", "dxshim"}));
  EXPECT_EQ(kubelet.starts, 1);
  EXPECT_EQ(node.service("dxshim").state.command_line, kDxshimCommand);
  EXPECT_EQ(node.service("dxshim").state.dependencies, (std::vector<std::string>{"containerd"}));
  EXPECT_EQ(node.service("containerd").starts, 0);
  EXPECT_NE(Joined(said).find("node name: ip-10-0-0-1.ec2.internal"), std::string::npos)
      << Joined(said);
  EXPECT_NE(Joined(said).find("proof: the running kubelet.exe"), std::string::npos) << Joined(said);

  // Again: nothing to change, nothing restarted.
  const Snapshot installed = Take(node);
  said.clear();
  ASSERT_EQ(Install(node, Options(&said)), kInstalled) << Joined(said);
  EXPECT_EQ(Take(node), installed);
  EXPECT_EQ(kubelet.starts, 1);
  EXPECT_NE(Joined(said).find("nothing to change"), std::string::npos) << Joined(said);

  // Uninstall: every value back, byte for byte, and the service gone.
  said.clear();
  auto undo = Undo();
  undo.say = [&](const std::string& l) { said.push_back(l); };
  ASSERT_EQ(Uninstall(node, undo), kInstalled) << Joined(said);
  EXPECT_EQ(Take(node), before);
  EXPECT_EQ(node.service("kubelet").starts, 2);
  EXPECT_FALSE(node.files.count(kRecord));
}

TEST(NodeInstall, KubeadmScriptGetsTheFlagInKubeadmFlagsFileOnly) {
  FakeNode node;
  BaseNode(node);
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {
      "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      "-ExecutionPolicy Bypass -NoProfile C:\\k\\StartKubelet.ps1", true};
  node.files["C:\\k\\StartKubelet.ps1"] =
      "$FileContent = Get-Content -Path \"$env:SYSTEMDRIVE/var/lib/kubelet/kubeadm-flags.env\"\r\n"
      "$cmd = \"C:\\k\\kubelet.exe $global:KubeletArgs --config=/var/lib/kubelet/config.yaml "
      "--hostname-override=win-node-1\"\r\nInvoke-Expression $cmd\r\n";
  node.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"] =
      "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
      "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n";
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] =
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
  node.AddService("kubelet", "C:\\k\\nssm.exe", {"containerd"});
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"],
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe://./pipe/dxshim "
            "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n");
  EXPECT_EQ(node.service("kubelet").state.command_line, "C:\\k\\nssm.exe");
  EXPECT_EQ(node.files["C:\\k\\StartKubelet.ps1"], before.files.at("C:\\k\\StartKubelet.ps1"));
  EXPECT_EQ(node.service("kubelet").starts, 1);
  EXPECT_NE(Joined(said).find("node name: win-node-1"), std::string::npos) << Joined(said);
  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
}

TEST(NodeInstall, AksScriptIsTakenOverWithoutRestartingKubelet) {
  FakeNode node;
  BaseNode(node);
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {
      "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {"c:\\k\\kubeletstart.ps1",
                                                                      true};
  node.files["c:\\k\\kubeletstart.ps1"] =
      "$KubeletArgList = $Global:ClusterConfiguration.Kubernetes.Kubelet.ConfigArgs\n"
      "$KubeletArgList += \"--container-runtime-endpoint=npipe://./pipe/containerd-containerd\"\n";
  node.AddService("kubelet", "c:\\k\\nssm.exe", {"containerd"});
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  ASSERT_EQ(Install(node, Options(&said)), kInstalled) << Joined(said);
  EXPECT_NE(node.files[kContainerdConfig].find("containerd-behind-dxshim"), std::string::npos);
  EXPECT_EQ(ReadTopLevelString(node.files[kDxshimConfig], "listen"),
            "npipe://./pipe/containerd-containerd");
  EXPECT_EQ(ReadTopLevelString(node.files[kDxshimConfig], "runtime"),
            "npipe://./pipe/containerd-behind-dxshim");
  EXPECT_EQ(node.service("kubelet").starts, 0) << "kubelet must not be restarted";
  EXPECT_EQ(node.service("kubelet").stops, 0);
  EXPECT_EQ(node.service("containerd").starts, 1);
  EXPECT_EQ(node.pipes["\\\\.\\pipe\\containerd-containerd"], node.service("dxshim").state.pid);
  EXPECT_EQ(node.service("kubelet").state.dependencies,
            (std::vector<std::string>{"containerd", "dxshim"}));
  EXPECT_NE(Joined(said).find("which has relayed kubelet's calls"), std::string::npos)
      << Joined(said);
  EXPECT_NE(Joined(said).find("label the node with kubectl"), std::string::npos) << Joined(said);

  const Snapshot installed = Take(node);
  ASSERT_EQ(Install(node, Options()), kInstalled);
  EXPECT_EQ(Take(node), installed);
  EXPECT_EQ(node.service("containerd").starts, 1);

  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
  EXPECT_EQ(node.service("kubelet").starts, 0);
  EXPECT_EQ(node.pipes["\\\\.\\pipe\\containerd-containerd"], node.service("containerd").state.pid);
}

TEST(NodeInstall, Rke2GetsAKubeletArgAndItsServiceDependsOnDxshim) {
  FakeNode node;
  BaseNode(node);
  node.services.erase("containerd");  // rke2 runs containerd itself
  node.files["C:\\etc\\rancher\\rke2\\config.yaml"] =
      "server: https://10.0.0.1:9345\ntoken: secret\n";
  node.AddService("rke2", "\"C:\\usr\\local\\bin\\rke2.exe\" agent");
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_EQ(ReadRke2KubeletArg(node.files["C:\\etc\\rancher\\rke2\\config.yaml"],
                               "container-runtime-endpoint"),
            "npipe://./pipe/dxshim");
  EXPECT_EQ(node.service("rke2").starts, 1);
  EXPECT_EQ(node.service("rke2").state.dependencies, (std::vector<std::string>{"dxshim"}));
  EXPECT_TRUE(node.service("dxshim").state.dependencies.empty());
  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
}

TEST(NodeInstall, ConfigFileEndpointIsChangedInTheFileKubeletReads) {
  FakeNode node;
  BaseNode(node);
  const std::string json =
      "{\n  \"kind\": \"KubeletConfiguration\",\n  \"containerRuntimeEndpoint\": "
      "\"npipe://./pipe/containerd-containerd\"\n}";
  node.files["C:\\var\\lib\\kubelet\\config.json"] = json;
  node.AddService("kubelet", "\"C:\\k\\kubelet.exe\" --config=C:\\var\\lib\\kubelet\\config.json",
                  {"containerd"});
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.files["C:\\var\\lib\\kubelet\\config.json"],
            "{\n  \"kind\": \"KubeletConfiguration\",\n  \"containerRuntimeEndpoint\": "
            "\"npipe://./pipe/dxshim\"\n}");
  EXPECT_EQ(node.service("kubelet").state.command_line,
            "\"C:\\k\\kubelet.exe\" --config=C:\\var\\lib\\kubelet\\config.json");
}

// Kubelet's flags beat its config file (kubeadm's config.yaml has healthzPort: 10248 while a
// flag moves it): the proof asks the port kubelet serves.
TEST(NodeInstall, HealthPortFlagBeatsTheConfigFile) {
  FakeNode node;
  BaseNode(node);
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] =
      "kind: KubeletConfiguration\nhealthzPort: 10248\n";
  node.AddService(
      "kubelet",
      "\"C:\\k\\kubelet.exe\" --config=C:\\var\\lib\\kubelet\\config.yaml "
      "--container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=36337",
      {"containerd"});
  auto play = node.on_start;
  node.on_start = [play](FakeNode& n, const std::string& name) {
    if (name != "kubelet") return play(n, name);
    n.processes.push_back(
        {n.services.at(name).state.pid, "kubelet.exe", n.services.at(name).state.command_line});
    n.http["127.0.0.1:36337/healthz"] = {200, "ok"};
  };
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_NE(Joined(said).find("127.0.0.1:36337/healthz answers ok"), std::string::npos)
      << Joined(said);
}

TEST(NodeInstall, UnknownLauncherChangesNothingAndSaysWhatToSet) {
  FakeNode node;
  BaseNode(node);
  node.AddService("kubelet", "C:\\tools\\supervisor.exe --run kubelet", {"containerd"});
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, Options(&said)), kUnknownLauncher);
  EXPECT_EQ(Take(node), before);
  EXPECT_NE(Joined(said).find("supervisor.exe"), std::string::npos) << Joined(said);
  EXPECT_NE(Joined(said).find("--container-runtime-endpoint"), std::string::npos) << Joined(said);
}

TEST(NodeInstall, WithoutProofEverythingIsRolledBack) {
  FakeNode node;
  BaseNode(node);
  node.AddService(
      "kubelet",
      "\"C:\\k\\kubelet.exe\" --container-runtime-endpoint=npipe://./pipe/containerd-containerd",
      {"containerd"});
  // The live kubelet keeps containerd's endpoint whatever its service says (as a launcher that
  // rewrites it would).
  auto play = node.on_start;
  node.on_start = [play](FakeNode& n, const std::string& name) {
    play(n, name);
    if (name == "kubelet") {
      n.processes.back().command_line =
          "C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd";
    }
  };
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, Options(&said)), kFailed);
  EXPECT_EQ(Take(node), before) << Joined(said);
  EXPECT_FALSE(node.services.count("dxshim"));
  EXPECT_FALSE(node.files.count(kRecord));
  EXPECT_NE(
      Joined(said).find("uses npipe://./pipe/containerd-containerd, not npipe://./pipe/dxshim"),
      std::string::npos)
      << Joined(said);
  EXPECT_NE(Joined(said).find("rolled back"), std::string::npos) << Joined(said);
}

TEST(NodeInstall, UninstallRefusesATamperedValueAndAMissingRecord) {
  FakeNode node;
  BaseNode(node);
  node.AddService(
      "kubelet",
      "\"C:\\k\\kubelet.exe\" --container-runtime-endpoint=npipe://./pipe/containerd-containerd",
      {"containerd"});
  std::vector<std::string> said;
  auto undo = Undo();
  undo.say = [&](const std::string& l) { said.push_back(l); };
  EXPECT_EQ(Uninstall(node, undo), kFailed);
  EXPECT_NE(Joined(said).find("no install record"), std::string::npos) << Joined(said);

  ASSERT_EQ(Install(node, Options()), kInstalled);
  node.service("kubelet").state.command_line += " --v=4";  // changed since, by hand
  const Snapshot tampered = Take(node);
  said.clear();
  EXPECT_EQ(Uninstall(node, undo), kFailed);
  EXPECT_EQ(Take(node), tampered);
  EXPECT_NE(Joined(said).find("service kubelet's command line"), std::string::npos) << Joined(said);
}

// A record a local user planted (any user may create files under %ProgramData% before dxshim's
// folder exists) would make uninstall write files as SYSTEM: it is refused, nothing changes.
TEST(NodeInstall, ARecordNotOwnedByAdministratorsIsRefused) {
  FakeNode node;
  BaseNode(node);
  node.AddService("kubelet", kEksLine, {"containerd"});
  node.files["C:\\ProgramData\\kubernetes\\kubelet-config.json"] = "{}";
  InstallRecord planted;
  planted.mode = "endpoint";
  planted.kubelet_service = "kubelet";
  NodeChange change;
  change.target = "C:\\Windows\\System32\\drivers\\etc\\hosts";
  change.before = "evil";
  change.after = "";
  planted.changes = {change};
  node.files["C:\\Windows\\System32\\drivers\\etc\\hosts"] = "";
  node.files[kRecord] = WriteInstallRecord(planted);
  node.untrusted[kRecord] = "owned by S-1-5-21-1-2-3-1001";
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto undo = Undo();
  undo.say = [&](const std::string& l) { said.push_back(l); };
  EXPECT_EQ(Uninstall(node, undo), kFailed);
  EXPECT_EQ(Install(node, Options(&said)), kFailed);
  EXPECT_EQ(Take(node), before);
  EXPECT_NE(Joined(said).find("owned by S-1-5-21-1-2-3-1001, not by SYSTEM or Administrators"),
            std::string::npos)
      << Joined(said);
}

TEST(NodeInstall, ServiceOnlyTouchesNeitherKubeletNorContainerd) {
  FakeNode node;
  BaseNode(node);
  node.AddService("kubelet", kEksLine, {"containerd"});
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.service_only = true;
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_TRUE(node.service("dxshim").state.running);
  EXPECT_EQ(node.service("kubelet").state.command_line, before.services.at("kubelet").first);
  EXPECT_EQ(node.service("kubelet").starts, 0);
  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
}

TEST(NodeInstall, NssmRunningKubeletDirectlyGetsTheFlagInAppParameters) {
  FakeNode node;
  BaseNode(node);
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {"C:\\k\\kubelet.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      "--container-runtime-endpoint npipe:////./pipe/containerd-containerd --v=2", true};
  node.AddService("kubelet", "C:\\k\\nssm.exe", {"containerd"});
  // NSSM runs "Application" AppParameters.
  auto play = node.on_start;
  node.on_start = [play](FakeNode& n, const std::string& name) {
    if (name != "kubelet") return play(n, name);
    n.processes.push_back(
        {n.services.at(name).state.pid, "kubelet.exe",
         "\"C:\\k\\kubelet.exe\" " +
             n.registry.at(FakeNode::RegistryName(kNssmKey, "AppParameters")).data});
    n.http[kHealthz] = {200, "ok"};
  };
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  const auto parameters = node.registry.at(FakeNode::RegistryName(kNssmKey, "AppParameters"));
  EXPECT_EQ(parameters.data, "--container-runtime-endpoint npipe://./pipe/dxshim --v=2");
  EXPECT_TRUE(parameters.expand) << "NSSM's REG_EXPAND_SZ is kept";
  EXPECT_EQ(node.service("kubelet").state.command_line, "C:\\k\\nssm.exe");
  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
}

TEST(NodeInstall, ConfigDirDropInThatSetsTheEndpointIsTheFileChanged) {
  FakeNode node;
  BaseNode(node);
  node.files["C:\\Program Files\\kubelet\\config.yaml"] =
      "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: npipe://./pipe/old\n";
  node.files["C:\\Program Files\\kubelet\\conf.d\\10-runtime.conf"] =
      "containerRuntimeEndpoint: npipe:////./pipe/containerd-containerd\n";
  node.files["C:\\Program Files\\kubelet\\conf.d\\20-other.conf"] = "maxPods: 30\n";
  node.AddService("kubelet",
                  "\"C:\\Program Files\\kubelet\\kubelet.exe\" "
                  "--config=\"C:\\Program Files\\kubelet\\config.yaml\" "
                  "--config-dir \"C:\\Program Files\\kubelet\\conf.d\"",
                  {"containerd"});
  auto play = node.on_start;
  node.on_start = [play](FakeNode& n, const std::string& name) {
    if (name != "kubelet") return play(n, name);
    n.processes.push_back(
        {n.services.at(name).state.pid, "kubelet.exe", n.services.at(name).state.command_line});
    n.http[kHealthz] = {200, "ok"};
  };
  const Snapshot before = Take(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.files["C:\\Program Files\\kubelet\\conf.d\\10-runtime.conf"],
            "containerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(node.files["C:\\Program Files\\kubelet\\config.yaml"],
            before.files.at("C:\\Program Files\\kubelet\\config.yaml"));
  EXPECT_EQ(node.service("kubelet").state.command_line, before.services.at("kubelet").first);
  ASSERT_EQ(Uninstall(node, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before);
}

TEST(NodeInstall, AReplacedBinaryRestartsDxshimAloneWhileKubeletRuns) {
  FakeNode node;
  BaseNode(node);
  node.files["C:\\ProgramData\\kubernetes\\kubelet-config.json"] = "{}";
  node.AddService("kubelet", kEksLine, {"containerd"});
  ASSERT_EQ(Install(node, Options()), kInstalled);
  const Snapshot installed = Take(node);
  const int kubelet_starts = node.service("kubelet").starts;
  const int kubelet_stops = node.service("kubelet").stops;
  const int dxshim_starts = node.service("dxshim").starts;
  std::vector<std::string> said;
  auto o = Options(&said);
  o.restart_service = true;
  ASSERT_EQ(Install(node, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.service("dxshim").starts, dxshim_starts + 1);
  EXPECT_EQ(node.service("kubelet").starts, kubelet_starts);
  EXPECT_EQ(node.service("kubelet").stops, kubelet_stops);
  EXPECT_EQ(Take(node), installed) << "kubelet's dependencies are back";
}

TEST(NodeInstallRecord, KeepsBytesAcrossWriteAndRead) {
  InstallRecord record;
  record.mode = "endpoint";
  record.launcher = "x";
  record.restart = "kubelet";
  record.created_service = true;
  NodeChange change{NodeChange::Kind::kFile,
                    "C:\\a b\\c.yaml",
                    "",
                    false,
                    std::string("\xEF\xBB\xBFkey: \"v\"\r\n\t\0x", 17),
                    "after\n",
                    "why \"quoted\""};
  record.changes = {change, {NodeChange::Kind::kRegistry, "K", "N", true, std::nullopt, "", ""}};
  const auto read = ReadInstallRecord(WriteInstallRecord(record));
  EXPECT_EQ(read.changes, record.changes);
  EXPECT_TRUE(read.created_service);
  EXPECT_THROW(ReadInstallRecord("{\"version\": 9}"), NodeError);
}

}  // namespace
}  // namespace dxshim::node::test
