// The plan of an install (shim/install/install_plan.h): every change and service decision computed
// before anything changes.
#include "shim/install/install_plan.h"

#include <gtest/gtest.h>

#include "shim/install/edit/containerd_config.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeInstallPlan, PlanTakesOverAksWithTtrpcPinnedAndADxshimThatWaitsForNoOne) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const InstallPlan plan = PlanOf(node);
  EXPECT_EQ(plan.mode, InstallMode::kTakeover);
  ASSERT_TRUE(plan.create_dxshim);
  EXPECT_TRUE(plan.create_dxshim->dependencies.empty());
  EXPECT_EQ(plan.kubelet_pipe, "\\\\.\\pipe\\containerd-containerd");
  EXPECT_EQ(plan.moved_pipe, "\\\\.\\pipe\\containerd-behind-dxshim");
  ASSERT_EQ(plan.changes.size(), 3U);
  EXPECT_EQ(ServedPipes(plan.changes[0].after).ttrpc, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  EXPECT_EQ(plan.changes[2].after, "containerd/dxshim");
  EXPECT_TRUE(plan.RestartsLauncher());
}

// image-builder @ae63061 templates/StartKubelet.ps1 names kubelet's config file with
// $env:SYSTEMDRIVE; kubeadm 1.34 and later write the endpoint there, not into kubeadm-flags.env.
TEST(NodeInstallPlan, ImageBuilderScriptsConfigFileHoldsTheEndpointOfKubeadm136) {
  FakeNode node;
  BaseNode(node);
  node.registry[FakeNode::RegistryName(kNssmKey, "Application")] = {
      "%SystemRoot%\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", true};
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      "-ExecutionPolicy Bypass -NoProfile C:\\k\\StartKubelet.ps1", true};
  node.files["C:\\k\\StartKubelet.ps1"] =
      "$FileContent = Get-Content -Path \"/var/lib/kubelet/kubeadm-flags.env\" -Raw\r\n"
      "$argList = @(\r\n"
      "    \"--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki\",\r\n"
      "    \"--config=$env:SYSTEMDRIVE/var/lib/kubelet/config.yaml\",\r\n"
      "    \"--hostname-override=$(hostname)\",\r\n"
      "    '--resolv-conf=\"\"'\r\n)\r\n";
  node.files[kFlagsFile] = "KUBELET_KUBEADM_ARGS=\"--cloud-provider=external --v=2\"\n";
  node.files["C:\\var\\lib\\kubelet\\config.yaml"] =
      "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: "
      "npipe:////./pipe/containerd-containerd\n";
  node.AddService("kubelet", "\"c:\\k\\nssm.exe\"", {"containerd"});
  const auto launch = FindKubeletLaunch(node);
  EXPECT_EQ(launch.launcher, Launcher::kNssmKubeadmScript);
  EXPECT_EQ(launch.runtime_endpoint.value, "npipe:////./pipe/containerd-containerd");
  EXPECT_EQ(launch.runtime_endpoint.place, SettingPlace::kConfigFile);
  EXPECT_FALSE(launch.hostname_override);  // $(hostname): computed by the script
  auto options = Options().plan;
  options.node_labels.clear();
  const InstallPlan plan = PlanInstall(node, launch, InstallMode::kEndpoint, options);
  ASSERT_EQ(plan.changes.size(), 2U);
  EXPECT_EQ(plan.changes[0].target, "C:\\var\\lib\\kubelet\\config.yaml");
  EXPECT_EQ(plan.changes[0].after,
            "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(plan.kubelet_pipe_before, "\\\\.\\pipe\\containerd-containerd");
}

// Fuzzing (tests/fuzz/kubelet_launch_fuzz.cpp): a kubeadm-flags.env that cannot be read is a node
// that cannot be read, NodeError like every other failure of FindKubeletLaunch (an EditError
// escaped: install --service-only then stopped instead of going on without the launcher).
TEST(NodeInstallPlan, ABadKubeadmFlagsFileIsANodeError) {
  FakeNode node;
  BaseNode(node);
  KubeadmShape(node);
  node.files[kFlagsFile] = "KUBELET_KUBEADM_ARGS=--v=2\n";
  try {
    FindKubeletLaunch(node);
    ADD_FAILURE() << "no error";
  } catch (const NodeError& e) {
    EXPECT_NE(std::string(e.what()).find("kubeadm-flags.env line 1"), std::string::npos)
        << e.what();
  }
}

// Fuzzing: NSSM's AppParameters are read as the arguments kubelet.exe gets after its program.
TEST(NodeInstallPlan, NssmParametersFirstWordIsReadAsAnArgument) {
  FakeNode node;
  BaseNode(node);
  NssmKubeletShape(node);
  node.registry[FakeNode::RegistryName(kNssmKey, "AppParameters")] = {
      R"(--config="C:\k dir\config.yaml" --container-runtime-endpoint npipe://./pipe/x)", true};
  node.files[R"(C:\k dir\config.yaml)"] = "kind: KubeletConfiguration\n";
  const auto launch = FindKubeletLaunch(node);
  EXPECT_EQ(launch.config_file, R"(C:\k dir\config.yaml)");
}

}  // namespace
}  // namespace dxshim::install::test
