// dxshim install / uninstall (shim/install/installer.h) on in-memory nodes shaped like each
// launcher the distributions use (tests/install/fake_launchers.h; deploy/windows/DISTRIBUTIONS.md
// cites their sources). FakeNode stands in for the Windows registry and service manager, FakeProbe
// for dxshim answering over its pipe; the tests under tests/e2e/node_install_*_test.sh run the same
// code against wine's real ones.
//
// Every step of install, uninstall and rollback survives an interruption: the run is killed at
// each point of each step in turn (journaled as begun, applied, journaled as done), and from what
// it left, both a re-run and an uninstall leave the node exactly as they should: a re-run of
// install as an install that was never interrupted, an uninstall as the node before install.
// The kill is an exception no phase catches (Killed is not a std::exception), as a killed process
// catches nothing.
#include "shim/install/installer.h"

#include <gtest/gtest.h>

#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/containerd_config.h"
#include "shim/install/edit/rke2_config.h"
#include "shim/install/install_journal.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

bool Has(const std::vector<std::string>& said, const std::string& text) {
  return Joined(said).find(text) != std::string::npos;
}

// For every shape: install proves kubelet uses dxshim and says how long kubelet had no runtime; a
// second install changes and restarts nothing; uninstall puts every value back byte for byte.
TEST(NodeInstall, EveryShapeInstallsAgainAndUninstalls) {
  for (const auto& shape : Shapes()) {
    SCOPED_TRACE(shape.name);
    FakeNode node;
    BaseNode(node);
    shape.make(node);
    const Snapshot before = Take(node);
    FakeProbe probe(node);
    std::vector<std::string> said;
    ASSERT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
    EXPECT_TRUE(Has(said, "proof: kubelet.exe (pid ")) << Joined(said);
    EXPECT_TRUE(Has(said, "kubelet had no runtime for ")) << Joined(said);
    const auto journal = ReadInstallJournal(node.files.at(kRecord));
    EXPECT_FALSE(journal.procedure) << "the procedure is over";
    EXPECT_TRUE(node.service("dxshim").state.running);

    const Snapshot installed = Take(node);
    std::map<std::string, int> starts;
    for (const auto& [name, s] : node.services) starts[name] = s.starts;
    said.clear();
    ASSERT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
    EXPECT_EQ(Take(node), installed) << Describe(Take(node), installed);
    for (const auto& [name, s] : node.services) EXPECT_EQ(s.starts, starts[name]) << name;
    EXPECT_TRUE(Has(said, "nothing to change")) << Joined(said);

    said.clear();
    ASSERT_EQ(Uninstall(node, probe, Undo(&said)), kInstalled) << Joined(said);
    EXPECT_EQ(Take(node), before) << Describe(Take(node), before);
    EXPECT_FALSE(node.services.count("dxshim"));
  }
}

TEST(NodeInstall, EksGetsTheFlagOnTheServiceHostsLineAndDependsOnDxshim) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  ASSERT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
  const auto& kubelet = node.service("kubelet");
  EXPECT_EQ(kubelet.state.command_line,
            "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet "
            "\"C:\\k\\kubelet.exe\" "
            "--config=\"C:\\ProgramData\\kubernetes\\kubelet-config.json\" "
            "--hostname-override=ip-10-0-0-1.ec2.internal "
            "--container-runtime-endpoint=\"npipe://./pipe/dxshim\" --v=1 "
            "--node-labels=dxshim.io/gpu.present=true,dxshim.io/gpu.count=1");
  EXPECT_EQ(kubelet.state.dependencies, (std::vector<std::string>{"dxshim"}));
  EXPECT_EQ(kubelet.starts, 1);
  EXPECT_EQ(node.service("dxshim").state.dependencies, (std::vector<std::string>{"containerd"}));
  EXPECT_EQ(node.service("containerd").starts, 0);
  EXPECT_TRUE(Has(said, "node name: ip-10-0-0-1.ec2.internal")) << Joined(said);
  EXPECT_TRUE(Has(said,
                  "kubectl label node ip-10-0-0-1.ec2.internal --overwrite "
                  "dxshim.io/gpu.present=true dxshim.io/gpu.count=1"))
      << Joined(said);
}

TEST(NodeInstall, KubeadmScriptGetsTheFlagInKubeadmFlagsFileOnly) {
  FakeNode node;
  BaseNode(node);
  KubeadmShape(node);
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.files[kFlagsFile],
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe://./pipe/dxshim "
            "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n");
  EXPECT_EQ(node.files["C:\\k\\StartKubelet.ps1"], before.files.at("C:\\k\\StartKubelet.ps1"));
  EXPECT_EQ(node.service("kubelet").starts, 1);
}

// AKS: containerd moves, its TTRPC pipe stays where the running shims publish their events,
// kubelet is neither restarted nor stopped, and the window is containerd's restart.
TEST(NodeInstall, AksIsTakenOverWithTtrpcKeptAndKubeletUntouched) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  ASSERT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
  const auto pipes = ServedPipes(node.files[kContainerdConfig]);
  EXPECT_EQ(pipes.grpc, "\\\\.\\pipe\\containerd-behind-dxshim");
  EXPECT_EQ(pipes.ttrpc, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  EXPECT_EQ(node.pipes["\\\\.\\pipe\\containerd-containerd.ttrpc"],
            node.service("containerd").state.pid);
  EXPECT_EQ(ReadTopLevelString(node.files[kDxshimConfig], "listen"),
            "npipe://./pipe/containerd-containerd");
  EXPECT_EQ(ReadTopLevelString(node.files[kDxshimConfig], "runtime"),
            "npipe://./pipe/containerd-behind-dxshim");
  EXPECT_EQ(node.service("kubelet").starts, 0) << "kubelet must not be restarted";
  EXPECT_EQ(node.service("kubelet").stops, 0);
  EXPECT_EQ(node.service("containerd").starts, 1);
  EXPECT_TRUE(node.service("dxshim").state.dependencies.empty())
      << "dxshim starts beside containerd, not after it";
  EXPECT_EQ(node.service("kubelet").state.dependencies,
            (std::vector<std::string>{"containerd", "dxshim"}));
  EXPECT_TRUE(Has(said,
                  "from the stop of service containerd to the first CRI call answered "
                  "through \\\\.\\pipe\\containerd-containerd"))
      << Joined(said);
  EXPECT_TRUE(Has(said, "label the node with kubectl")) << Joined(said);
}

// rke2: the operator's files stay as they are; a drop-in of dxshim's own, read last, appends the
// endpoint to kubelet-arg and the GPU labels to node-label, so rke2's own node-label items stay.
TEST(NodeInstall, Rke2GetsADropInOfItsOwnAndKeepsTheNodeLabels) {
  FakeNode node;
  BaseNode(node);
  Rke2Shape(node);
  node.files[std::string(kRke2Config) + ".d\\10-site.yaml"] = "kubelet-arg:\n  - \"v=2\"\n";
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  ASSERT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
  const std::string dropin = std::string(kRke2Config) + ".d\\" + kRke2DropIn;
  EXPECT_EQ(node.files[dropin],
            Rke2DropInText({"container-runtime-endpoint=npipe://./pipe/dxshim"},
                           {"dxshim.io/gpu.present=true", "dxshim.io/gpu.count=1"}));
  EXPECT_EQ(node.files[kRke2Config], before.files.at(kRke2Config));
  EXPECT_EQ(node.service("rke2").starts, 1);
  EXPECT_EQ(node.service("rke2").state.dependencies, (std::vector<std::string>{"dxshim"}));
  EXPECT_TRUE(node.service("dxshim").state.dependencies.empty());
  ASSERT_EQ(Uninstall(node, probe, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before) << Describe(Take(node), before);
}

TEST(NodeInstall, UnknownLauncherChangesNothingAndSaysWhatToSet) {
  FakeNode node;
  BaseNode(node);
  node.AddService("kubelet", "C:\\tools\\supervisor.exe --run kubelet", {"containerd"});
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, probe, Options(&said)), kUnknownLauncher);
  EXPECT_EQ(Take(node), before);
  EXPECT_TRUE(Has(said, "supervisor.exe")) << Joined(said);
  EXPECT_TRUE(Has(said, "--container-runtime-endpoint")) << Joined(said);
}

// A kubelet that never calls dxshim (its launcher ignores the change): no proof, every change
// undone, the journal gone.
TEST(NodeInstall, WithoutProofEverythingIsRolledBack) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  auto play = node.on_start;
  node.on_start = [play](FakeNode& n, const std::string& name) {
    play(n, name);
    if (name == "kubelet") {
      n.processes.back().command_line =
          "C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd";
    }
  };
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, probe, Options(&said)), kFailed);
  EXPECT_EQ(Take(node), before) << Describe(Take(node), before) << Joined(said);
  EXPECT_FALSE(node.files.count(kRecord));
  EXPECT_TRUE(Has(said, "has made no CRI call through \\\\.\\pipe\\dxshim")) << Joined(said);
  EXPECT_TRUE(Has(said, "rolled back")) << Joined(said);
}

// A proven install whose journal cannot be updated at its end (a sharing violation on the record)
// is not rolled back: kubelet already uses dxshim. The journal keeps the procedure with every step
// done, and the next run proves and records it.
TEST(NodeInstall, AProvenInstallWhoseRecordCannotBeWrittenIsRecordedByTheNextRun) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  bool refuse = true;
  node.on_write = [&](const std::string& path, const std::string& bytes) {
    if (refuse && path == kRecord && bytes.find("\"procedure\"") == std::string::npos) {
      throw NodeError("the record is in use by another process");
    }
  };
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, probe, Options(&said)), kFailed);
  EXPECT_TRUE(Has(said, "the install is done, but the journal")) << Joined(said);
  EXPECT_FALSE(Has(said, "rolling back")) << Joined(said);
  EXPECT_TRUE(node.service("dxshim").state.running);
  const auto left = ReadInstallJournal(node.files.at(kRecord));
  ASSERT_TRUE(left.procedure);
  for (const Step& step : left.procedure->steps) EXPECT_EQ(step.state, Step::State::kDone);

  refuse = false;
  said.clear();
  EXPECT_EQ(Install(node, probe, Options(&said)), kInstalled) << Joined(said);
  EXPECT_TRUE(Has(said, "finishing it first")) << Joined(said);
  const auto recorded = ReadInstallJournal(node.files.at(kRecord));
  EXPECT_FALSE(recorded.procedure);
  EXPECT_FALSE(recorded.changes.empty());
  EXPECT_TRUE(node.service("dxshim").state.running);
  said.clear();
  EXPECT_EQ(Uninstall(node, probe, Undo(&said)), kInstalled) << Joined(said);
  EXPECT_FALSE(node.files.count(kRecord));
  EXPECT_EQ(Take(node), before) << Describe(Take(node), before);
}

// A record of nothing (as a version 1 dxshim could leave) is removed by uninstall.
TEST(NodeInstall, UninstallRemovesARecordOfNothing) {
  FakeNode node;
  BaseNode(node);
  FakeProbe probe(node);
  node.files[kRecord] =
      "{\"version\": 1, \"mode\": \"endpoint\", \"launcher\": \"x\", \"kubeletService\": "
      "\"kubelet\", \"containerdService\": \"containerd\", \"createdService\": false, "
      "\"changes\": []}";
  std::vector<std::string> said;
  EXPECT_EQ(Uninstall(node, probe, Undo(&said)), kInstalled) << Joined(said);
  EXPECT_FALSE(node.files.count(kRecord));
}

// The proof believes only the process the system names as the pipe's server, and only when that
// process says it is itself.
TEST(NodeInstall, AnImpostorAnsweringOnThePipeIsNoProof) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  probe.answer_as = 4242;
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, probe, Options(&said)), kFailed);
  EXPECT_TRUE(Has(said, "says it is pid 4242, not the dxshim service's pid")) << Joined(said);
}

TEST(NodeInstall, UninstallRefusesAValueItCannotTakeItsSettingOutOf) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  EXPECT_EQ(Uninstall(node, probe, Undo(&said)), kFailed);
  EXPECT_TRUE(Has(said, "no install record")) << Joined(said);

  ASSERT_EQ(Install(node, probe, Options()), kInstalled);
  node.files["C:\\ProgramData\\dxshim\\dxshim.yaml"] += "log-level: debug\r\n";  // not install's
  auto journal = ReadInstallJournal(node.files.at(kRecord));
  NodeChange odd;
  odd.target = "C:\\ProgramData\\dxshim\\dxshim.yaml";
  odd.before = "listen: x\r\n";
  odd.after = "listen: y\r\n";
  journal.changes.push_back(odd);
  node.files[kRecord] = WriteInstallJournal(journal);
  const Snapshot tampered = Take(node);
  said.clear();
  EXPECT_EQ(Uninstall(node, probe, Undo(&said)), kFailed);
  EXPECT_EQ(Take(node), tampered);
  EXPECT_TRUE(Has(said, "file C:\\ProgramData\\dxshim\\dxshim.yaml changed since install"))
      << Joined(said);
}

// image-builder's RestartKubelet.ps1 deletes kubelet's service and makes it again from
// kubeadm-flags.env (its own flags first, kubeadm's last, `depend= containerd`): kubelet stays on
// dxshim, but no longer waits for it. Uninstall takes dxshim's settings out of what is there now.
TEST(NodeInstall, AServiceRebuiltByRestartKubeletIsStillUninstalled) {
  FakeNode node;
  BaseNode(node);
  CapzNativeShape(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_NE(node.files[kFlagsFile].find("npipe://./pipe/dxshim"), std::string::npos);
  const auto rebuilt = [](const std::string& flags_file) {
    const auto begin = flags_file.find('"') + 1;
    return "\"C:\\k\\kube-log-runner.exe\" --log-file=/var/log/kubelet/kubelet.err.log "
           "C:\\k\\kubelet.exe --config=C:/var/lib/kubelet/config.yaml --windows-service " +
           flags_file.substr(begin, flags_file.rfind('"') - begin);
  };
  const std::string original_flags = CapzFlagsFile();
  node.service("kubelet").state.command_line = rebuilt(node.files[kFlagsFile]);
  node.service("kubelet").state.dependencies = {"containerd"};
  said.clear();
  ASSERT_EQ(Uninstall(node, probe, Undo(&said)), kInstalled) << Joined(said);
  EXPECT_EQ(node.files[kFlagsFile], original_flags);
  EXPECT_EQ(node.service("kubelet").state.command_line, rebuilt(original_flags));
  EXPECT_EQ(node.service("kubelet").state.dependencies, (std::vector<std::string>{"containerd"}));
  EXPECT_TRUE(Has(said, "only the kubelet flags dxshim set are put back")) << Joined(said);
  EXPECT_FALSE(node.services.count("dxshim"));
}

// The same with kubeadm 1.34 and later (NodeLocalCRISocket): the endpoint is in config.yaml, not
// in kubeadm-flags.env, so the rebuilt command line has no endpoint flag at all. Install gave
// config.yaml dxshim's endpoint too, so the rebuilt kubelet stays on dxshim; nothing of dxshim's
// is left in the command line: uninstall leaves it as it is instead of refusing, and puts
// config.yaml back.
TEST(NodeInstall, AServiceRebuiltWithoutTheEndpointFlagIsLeftAsItIs) {
  FakeNode node;
  BaseNode(node);
  CapzNativeShape(node);
  const std::string flags = "KUBELET_KUBEADM_ARGS=\"--cloud-provider=external --v=2\"\n";
  node.files[kFlagsFile] = flags;
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] =
      "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: "
      "npipe:////./pipe/containerd-containerd\n";
  // kubeadm >= 1.34's own record of the node's CRI socket, as WriteInstanceConfigToDisk writes it.
  const std::string instance =
      "containerRuntimeEndpoint: \"npipe:////./pipe/containerd-containerd\"\n";
  node.files[kInstanceConfig] = instance;
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.plan.node_labels.clear();
  ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_EQ(node.files[kFlagsFile], flags);
  EXPECT_EQ(node.files["C:\\var\\lib\\kubelet\\config.yaml"],
            "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(node.files[kInstanceConfig], "containerRuntimeEndpoint: \"npipe://./pipe/dxshim\"\n");
  EXPECT_TRUE(Has(said, "so an upgrade keeps dxshim")) << Joined(said);
  const std::string rebuilt =
      "\"C:\\k\\kube-log-runner.exe\" --log-file=/var/log/kubelet/kubelet.err.log "
      "C:\\k\\kubelet.exe --config=C:/var/lib/kubelet/config.yaml --windows-service "
      "--cloud-provider=external --v=2";
  node.service("kubelet").state.command_line = rebuilt;
  node.service("kubelet").state.dependencies = {"containerd"};
  said.clear();
  ASSERT_EQ(Uninstall(node, probe, Undo(&said)), kInstalled) << Joined(said);
  EXPECT_EQ(node.service("kubelet").state.command_line, rebuilt);
  EXPECT_EQ(node.service("kubelet").state.dependencies, (std::vector<std::string>{"containerd"}));
  EXPECT_TRUE(Has(said, "no longer has the kubelet flags dxshim set: left as it is now"))
      << Joined(said);
  EXPECT_EQ(node.files["C:\\var\\lib\\kubelet\\config.yaml"],
            "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: "
            "npipe:////./pipe/containerd-containerd\n");
  EXPECT_EQ(node.files[kInstanceConfig], instance);
  EXPECT_FALSE(node.services.count("dxshim"));
}

// kubeadm's instance-config.yaml that cannot be read: install is refused, naming it, and nothing
// changes.
TEST(NodeInstall, AnUnreadableKubeadmInstanceConfigIsRefusedByName) {
  FakeNode node;
  BaseNode(node);
  CapzNativeShape(node);
  node.files[kInstanceConfig] =
      "containerRuntimeEndpoint: [npipe:////./pipe/containerd-containerd\n";
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  EXPECT_EQ(Install(node, probe, Options(&said)), kFailed);
  EXPECT_EQ(Take(node), before);
  EXPECT_TRUE(Has(said, "install refused: " + std::string(kInstanceConfig) + ": ")) << Joined(said);
}

// Another GPU device plugin registered with kubelet (AKS's DirectX plugin, in kubelet's checkpoint
// in %SystemDrive%\var\lib\kubelet\device-plugins): install is refused before anything changes
// (a dry run too), naming the resource, its devices and the fix; --allow-other-gpu-plugin says
// so and installs.
TEST(NodeInstall, AnotherGpuPluginRefusesInstallUnlessAllowed) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  node.files["C:\\var\\lib\\kubelet\\device-plugins\\kubelet_internal_checkpoint"] =
      R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"microsoft.com/directx":["0"]}},)"
      R"("Checksum":1})";
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  EXPECT_EQ(Install(node, probe, o), kFailed);
  EXPECT_EQ(Take(node), before) << Describe(Take(node), before);
  ASSERT_EQ(said.size(), 1u) << Joined(said);
  EXPECT_EQ(said[0],
            "install refused, nothing changed: kubelet has another GPU device plugin registered: "
            "microsoft.com/directx (1 device); each GPU is then advertised twice, once per "
            "resource, and kubelet gives the same GPU to a pod of each resource. Fix: on AKS, "
            "create the Windows GPU node pool with `--gpu-driver none` (az aks nodepool add; AKS "
            "then installs neither the driver nor its DirectX device plugin) and install the GPU "
            "driver yourself, or delete the other plugin's DaemonSet; elsewhere, remove the other "
            "device plugin from this node. Or run install again with --allow-other-gpu-plugin to "
            "keep both.");
  said.clear();
  o.dry_run = true;
  EXPECT_EQ(Install(node, probe, o), kFailed);
  EXPECT_TRUE(Has(said, "install refused, nothing changed: ")) << Joined(said);

  said.clear();
  o.dry_run = false;
  o.allow_other_gpu_plugin = true;
  ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_EQ(said[0],
            "warning: kubelet has another GPU device plugin registered: microsoft.com/directx (1 "
            "device); each GPU is then advertised twice, once per resource, and kubelet gives the "
            "same GPU to a pod of each resource. Going on: --allow-other-gpu-plugin");
  EXPECT_TRUE(Has(said, "installed: kubelet talks to containerd through dxshim")) << Joined(said);
}

// The folder dxshim's configuration names (device-plugin-dir) is where the checkpoint is read;
// dxshim's own resources, as configured, are not another plugin's; a checkpoint that cannot be
// read is said, and install goes on.
TEST(NodeInstall, TheCheckpointIsReadWhereTheConfigurationSays) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  node.files["D:\\kubelet\\device-plugins\\kubelet_internal_checkpoint"] =
      R"({"Data":{"RegisteredDevices":{"nvidia.com/gpu":["0"],"amd.com/gpu":[]}}})";
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  EXPECT_EQ(Install(node, probe, o), kInstalled) << "no checkpoint in kubelet's own folder";
  said.clear();
  o.device_plugin_dir = "D:\\kubelet\\device-plugins\\";
  o.dxshim_resources = {"nvidia.com/gpu"};
  o.dxshim_device_plugin = false;
  EXPECT_EQ(Install(node, probe, o), kFailed);
  EXPECT_TRUE(Has(said,
                  "registered: amd.com/gpu (registered, no healthy device now; kubelet drops it 5 "
                  "min after its plugin left); dxshim's device plugin is off"))
      << Joined(said);
  said.clear();
  node.files["D:\\kubelet\\device-plugins\\kubelet_internal_checkpoint"] = "{";
  EXPECT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_TRUE(Has(said,
                  "warning: kubelet's checkpoint D:\\kubelet\\device-plugins\\"
                  "kubelet_internal_checkpoint cannot be read: not JSON"))
      << Joined(said);
}

// A journal a local user planted (any user may create files under %ProgramData% before dxshim's
// folder exists) would make uninstall write files as SYSTEM: it is refused, nothing changes.
TEST(NodeInstall, AJournalNotOwnedByAdministratorsIsRefused) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  InstallJournal planted;
  planted.mode = "endpoint";
  planted.kubelet_service = "kubelet";
  NodeChange change;
  change.target = "C:\\Windows\\System32\\drivers\\etc\\hosts";
  change.before = "evil";
  change.after = "";
  planted.changes = {change};
  node.files["C:\\Windows\\System32\\drivers\\etc\\hosts"] = "";
  node.files[kRecord] = WriteInstallJournal(planted);
  node.untrusted[kRecord] = "owned by S-1-5-21-1-2-3-1001";
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  EXPECT_EQ(Uninstall(node, probe, Undo(&said)), kFailed);
  EXPECT_EQ(Install(node, probe, Options(&said)), kFailed);
  EXPECT_EQ(Take(node), before);
  EXPECT_TRUE(Has(said, "owned by S-1-5-21-1-2-3-1001, not by SYSTEM or Administrators"))
      << Joined(said);
}

// --service-only: the service alone, proven to serve and answer; kubelet's use of it is said not
// proven, with the bootstrap setting of this launcher; refused on AKS, where there is none.
TEST(NodeInstall, ServiceOnlyProvesWhatItCanAndSaysTheBootstrapSetting) {
  FakeNode node;
  BaseNode(node);
  CapzNativeShape(node);
  const Snapshot before = Take(node);
  FakeProbe probe(node);
  std::vector<std::string> said;
  auto o = Options(&said);
  o.service_only = true;
  ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
  EXPECT_TRUE(node.service("dxshim").state.running);
  EXPECT_EQ(node.service("kubelet").starts, 0);
  EXPECT_TRUE(Has(said, "not proven: kubelet.exe (pid ")) << Joined(said);
  EXPECT_TRUE(Has(said,
                  "the kubelet service's command line: "
                  "--container-runtime-endpoint=npipe://./pipe/dxshim"))
      << Joined(said);
  ASSERT_EQ(Uninstall(node, probe, Undo()), kInstalled);
  EXPECT_EQ(Take(node), before) << Describe(Take(node), before);

  FakeNode aks;
  BaseNode(aks);
  AksShape(aks);
  const Snapshot aks_before = Take(aks);
  FakeProbe aks_probe(aks);
  said.clear();
  EXPECT_EQ(Install(aks, aks_probe, o), kFailed);
  EXPECT_EQ(Take(aks), aks_before);
  EXPECT_TRUE(Has(said, "no bootstrap setting points kubelet at dxshim here")) << Joined(said);
}

TEST(NodeInstall, AReplacedBinaryRestartsDxshimAloneWhileKubeletRuns) {
  for (const auto& make : {EksShape, AksShape}) {
    FakeNode node;
    BaseNode(node);
    make(node);
    FakeProbe probe(node);
    ASSERT_EQ(Install(node, probe, Options()), kInstalled);
    const Snapshot installed = Take(node);
    const int kubelet_starts = node.service("kubelet").starts;
    const int containerd_starts = node.service("containerd").starts;
    const int dxshim_starts = node.service("dxshim").starts;
    std::vector<std::string> said;
    auto o = Options(&said);
    o.plan.replaced_binary = true;
    ASSERT_EQ(Install(node, probe, o), kInstalled) << Joined(said);
    EXPECT_EQ(node.service("dxshim").starts, dxshim_starts + 1);
    EXPECT_EQ(node.service("kubelet").starts, kubelet_starts);
    EXPECT_EQ(node.service("containerd").starts, containerd_starts);
    EXPECT_EQ(Take(node), installed) << "kubelet's dependencies are back";
    EXPECT_TRUE(Has(said, "from the stop of service dxshim to the first CRI call answered"))
        << Joined(said);
  }
}

struct Killed {};

struct Point {
  std::size_t step;
  StepPoint at;
};

// Every point the run passes, in order (counted by an interrupt that never fires).
template <typename Run>
std::vector<Point> PointsOf(Run run) {
  std::vector<Point> points;
  run([&points](std::size_t step, StepPoint at) { points.push_back({step, at}); });
  return points;
}

Interrupt KillAt(Point point) {
  return [point](std::size_t step, StepPoint at) {
    if (step == point.step && at == point.at) throw Killed{};
  };
}

std::string Name(const Point& p) {
  const char* at = p.at == StepPoint::kBegun     ? "begun"
                   : p.at == StepPoint::kApplied ? "applied"
                                                 : "done";
  return "step " + std::to_string(p.step + 1) + " " + at;
}

FakeNode Fresh(const Shape& shape) {
  FakeNode node;
  BaseNode(node);
  shape.make(node);
  return node;
}

// Install, killed at `point`: the node it leaves.
FakeNode InstallKilledAt(const Shape& shape, Point point) {
  FakeNode node = Fresh(shape);
  FakeProbe probe(node);
  auto o = Options();
  o.interrupt = KillAt(point);
  EXPECT_THROW(Install(node, probe, o), Killed) << Name(point);
  return node;
}

TEST(NodeInstallInterruption, EveryStepOfInstallIsFinishedByAReRunOrUndoneByUninstall) {
  for (const auto& shape : Shapes()) {
    SCOPED_TRACE(shape.name);
    FakeNode reference = Fresh(shape);
    const Snapshot before = Take(reference);
    FakeProbe reference_probe(reference);
    const auto points = PointsOf([&](Interrupt count) {
      auto o = Options();
      o.interrupt = std::move(count);
      ASSERT_EQ(Install(reference, reference_probe, o), kInstalled);
    });
    const Snapshot installed = Take(reference);
    ASSERT_GE(points.size(), 9U);
    for (const Point& point : points) {
      SCOPED_TRACE(Name(point));
      FakeNode rerun = InstallKilledAt(shape, point);
      FakeNode undone = rerun;
      FakeProbe rerun_probe(rerun);
      std::vector<std::string> said;
      ASSERT_EQ(Install(rerun, rerun_probe, Options(&said)), kInstalled) << Joined(said);
      EXPECT_EQ(Take(rerun), installed) << Describe(Take(rerun), installed);
      FakeProbe undone_probe(undone);
      said.clear();
      ASSERT_EQ(Uninstall(undone, undone_probe, Undo(&said)), kInstalled) << Joined(said);
      EXPECT_EQ(Take(undone), before) << Describe(Take(undone), before) << Joined(said);
    }
  }
}

// Another GPU plugin registered while an install was interrupted: the next run still finishes
// what the journal holds (the refusal guards new changes only), and leaves the node installed.
TEST(NodeInstallInterruption, AnInterruptedInstallIsFinishedThoughAnotherGpuPluginRegistered) {
  const auto& shape = Shapes().front();
  FakeNode reference = Fresh(shape);
  FakeProbe reference_probe(reference);
  const auto points = PointsOf([&](Interrupt count) {
    auto o = Options();
    o.interrupt = std::move(count);
    ASSERT_EQ(Install(reference, reference_probe, o), kInstalled);
  });
  const Snapshot installed = Take(reference);
  for (const Point& point : points) {
    SCOPED_TRACE(Name(point));
    FakeNode rerun = InstallKilledAt(shape, point);
    const std::string checkpoint =
        "C:\\var\\lib\\kubelet\\device-plugins\\kubelet_internal_checkpoint";
    rerun.files[checkpoint] =
        R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"microsoft.com/directx":["0"]}},)"
        R"("Checksum":1})";
    FakeProbe rerun_probe(rerun);
    std::vector<std::string> said;
    ASSERT_EQ(Install(rerun, rerun_probe, Options(&said)), kInstalled) << Joined(said);
    EXPECT_FALSE(Has(said, "install refused")) << Joined(said);
    rerun.files.erase(checkpoint);
    EXPECT_EQ(Take(rerun), installed) << Describe(Take(rerun), installed);
  }
}

TEST(NodeInstallInterruption, EveryStepOfUninstallIsFinishedByAReRun) {
  for (const auto& shape : Shapes()) {
    SCOPED_TRACE(shape.name);
    FakeNode node = Fresh(shape);
    const Snapshot before = Take(node);
    FakeProbe probe(node);
    ASSERT_EQ(Install(node, probe, Options()), kInstalled);
    const Snapshot installed = Take(node);
    FakeNode counted = node;
    FakeProbe counted_probe(counted);
    const auto points = PointsOf([&](Interrupt count) {
      auto o = Undo();
      o.interrupt = std::move(count);
      ASSERT_EQ(Uninstall(counted, counted_probe, o), kInstalled);
    });
    for (const Point& point : points) {
      SCOPED_TRACE(Name(point));
      FakeNode killed = node;
      FakeProbe killed_probe(killed);
      auto o = Undo();
      o.interrupt = KillAt(point);
      EXPECT_THROW(Uninstall(killed, killed_probe, o), Killed);
      FakeNode reinstalled = killed;
      std::vector<std::string> said;
      ASSERT_EQ(Uninstall(killed, killed_probe, Undo(&said)), kInstalled) << Joined(said);
      EXPECT_EQ(Take(killed), before) << Describe(Take(killed), before);
      FakeProbe reinstalled_probe(reinstalled);
      said.clear();
      ASSERT_EQ(Install(reinstalled, reinstalled_probe, Options(&said)), kInstalled)
          << Joined(said);
      EXPECT_EQ(Take(reinstalled), installed) << Describe(Take(reinstalled), installed);
    }
  }
}

// An install that is not proven rolls back; the rollback killed at any point is finished by the
// next run, whichever it is.
TEST(NodeInstallInterruption, EveryStepOfARollbackIsFinishedByTheNextRun) {
  const auto deaf = [](FakeNode& node) {  // a kubelet that never calls dxshim
    EksShape(node);
    auto play = node.on_start;
    node.on_start = [play](FakeNode& n, const std::string& name) {
      play(n, name);
      if (name == "kubelet") n.processes.back().command_line = "C:\\k\\kubelet.exe";
    };
  };
  FakeNode counted;
  BaseNode(counted);
  deaf(counted);
  const Snapshot before = Take(counted);
  FakeProbe counted_probe(counted);
  const auto points = PointsOf([&](Interrupt count) {
    auto o = Options();
    o.interrupt = std::move(count);
    ASSERT_EQ(Install(counted, counted_probe, o), kFailed);
  });
  ASSERT_EQ(Take(counted), before);
  // The rollback's steps are numbered from the first again.
  std::size_t install_points = 1;
  while (install_points < points.size() &&
         points[install_points].step >= points[install_points - 1].step) {
    ++install_points;
  }
  ASSERT_LT(install_points, points.size()) << "no rollback ran";
  for (std::size_t i = install_points; i < points.size(); ++i) {  // the rollback's points
    const Point& point = points[i];
    SCOPED_TRACE("rollback " + Name(point));
    FakeNode killed;
    BaseNode(killed);
    deaf(killed);
    FakeProbe killed_probe(killed);
    std::size_t seen = 0;
    auto o = Options();
    o.interrupt = [&](std::size_t, StepPoint) {
      if (seen++ == i) throw Killed{};
    };
    EXPECT_THROW(Install(killed, killed_probe, o), Killed);
    FakeNode uninstalled = killed;
    std::vector<std::string> said;
    EXPECT_EQ(Install(killed, killed_probe, Options(&said)), kFailed) << Joined(said);
    EXPECT_EQ(Take(killed), before) << Describe(Take(killed), before) << Joined(said);
    FakeProbe uninstalled_probe(uninstalled);
    said.clear();
    Uninstall(uninstalled, uninstalled_probe, Undo(&said));
    EXPECT_EQ(Take(uninstalled), before) << Describe(Take(uninstalled), before) << Joined(said);
  }
}

}  // namespace
}  // namespace dxshim::install::test
