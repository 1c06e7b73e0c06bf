// The steps that carry out an install plan and undo one (shim/install/install_procedure.h), in the
// order that keeps the node working at every step.
#include "shim/install/install_procedure.h"

#include <gtest/gtest.h>

#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

// The order of the steps is the safety of the switch: what a service reads is written while it
// runs, kubelet stops depending on what restarts, containerd stops only when everything its
// replacement needs is ready, dxshim starts right after, kubelet's final dependencies come last.
TEST(NodeInstallProcedure, TheTakeoverStepsHoldContainerdsStopUntilItsReplacementCanStart) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const auto steps = InstallSteps(PlanOf(node));
  EXPECT_EQ(
      Described(steps),
      (std::vector<std::string>{
          "create service dxshim", "write file C:\\Program Files\\containerd\\config.toml",
          "write file C:\\ProgramData\\dxshim\\dxshim.yaml", "write service kubelet's dependencies",
          "stop service containerd", "ask service dxshim to start", "start service containerd",
          "wait for \\\\.\\pipe\\containerd-behind-dxshim", "start service dxshim",
          "wait for \\\\.\\pipe\\containerd-containerd served by dxshim",
          "wait for the runtime to answer through \\\\.\\pipe\\containerd-containerd",
          "write service kubelet's dependencies"}));
  EXPECT_EQ(steps[3].change.after, "");  // kubelet depends on neither while they restart
  EXPECT_TRUE(steps[4].opens_window);
  EXPECT_TRUE(steps[10].closes_window);
  EXPECT_EQ(steps[11].change.after, "containerd/dxshim");
}

TEST(NodeInstallProcedure, TheEndpointStepsStartDxshimBeforeKubeletRestartsOntoIt) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  EXPECT_EQ(
      Described(InstallSteps(PlanOf(node))),
      (std::vector<std::string>{
          "create service dxshim", "write service kubelet's command line", "start service dxshim",
          "wait for \\\\.\\pipe\\dxshim served by dxshim", "write service kubelet's dependencies",
          "stop service kubelet", "start service kubelet"}));
}

TEST(NodeInstallProcedure, TheUndoStepsOfATakeoverBringContainerdBackOnItsPipe) {
  UndoPlan undo;
  undo.mode = "takeover";
  undo.kubelet_service = "kubelet";
  undo.containerd_service = "containerd";
  undo.dxshim_service = "dxshim";
  undo.kubelet_pipe_before = "\\\\.\\pipe\\containerd-containerd";
  undo.kubelet_dependencies = {"containerd", "dxshim"};
  Step toml;
  toml.change.target = kContainerdConfig;
  toml.change.before = "moved";
  toml.change.after = "original";
  Step deps;
  deps.change.kind = NodeChange::Kind::kServiceDependencies;
  deps.change.target = "kubelet";
  deps.change.before = "containerd/dxshim";
  deps.change.after = "containerd";
  undo.writes = {toml, deps};
  undo.restart_launcher = true;
  undo.delete_service = true;
  EXPECT_EQ(Described(UndoSteps(undo)),
            (std::vector<std::string>{
                "write service kubelet's dependencies",
                "write file C:\\Program Files\\containerd\\config.toml", "stop service dxshim",
                "stop service containerd", "start service containerd",
                "wait for \\\\.\\pipe\\containerd-containerd",
                "wait for the runtime to answer through \\\\.\\pipe\\containerd-containerd",
                "delete service dxshim", "start service containerd",
                "write service kubelet's dependencies"}));
}

}  // namespace
}  // namespace dxshim::install::test
