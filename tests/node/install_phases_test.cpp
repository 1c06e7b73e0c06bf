// The installer's phases one by one (shim/node/installer.h): plan, the steps that carry it out
// and undo it, describe, journal, apply, prove, roll back. installer_test.cpp runs them together.
#include <gtest/gtest.h>

#include "shim/node/containerd_config.h"
#include "shim/node/install_describe.h"
#include "shim/node/install_journal.h"
#include "shim/node/install_procedure.h"
#include "shim/node/install_step.h"
#include "shim/node/kubelet_launch.h"
#include "shim/node/kubelet_proof.h"
#include "shim/node/undo_plan.h"
#include "tests/node/fake_launchers.h"

namespace dxshim::node::test {
namespace {

std::vector<std::string> Described(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.Describe());
  return out;
}

InstallPlan Plan(FakeNode& node, const std::string& mode = "auto") {
  const auto launch = FindKubeletLaunch(node);
  return PlanInstall(node, launch, ChooseMode(launch, mode), Options().plan);
}

TEST(NodeInstallPhases, PlanTakesOverAksWithTtrpcPinnedAndADxshimThatWaitsForNoOne) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const InstallPlan plan = Plan(node);
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

// The order of the steps is the safety of the switch: what a service reads is written while it
// runs, kubelet stops depending on what restarts, containerd stops only when everything its
// replacement needs is ready, dxshim starts right after, kubelet's final dependencies come last.
TEST(NodeInstallPhases, TheTakeoverStepsHoldContainerdsStopUntilItsReplacementCanStart) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const auto steps = InstallSteps(Plan(node));
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

TEST(NodeInstallPhases, TheEndpointStepsStartDxshimBeforeKubeletRestartsOntoIt) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  EXPECT_EQ(
      Described(InstallSteps(Plan(node))),
      (std::vector<std::string>{
          "create service dxshim", "write service kubelet's command line", "start service dxshim",
          "wait for \\\\.\\pipe\\dxshim served by dxshim", "write service kubelet's dependencies",
          "stop service kubelet", "start service kubelet"}));
}

TEST(NodeInstallPhases, TheUndoStepsOfATakeoverBringContainerdBackOnItsPipe) {
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

TEST(NodeInstallPhases, DescribeSaysEveryChangeAndStepAndTheWindow) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const auto plan = Plan(node);
  auto steps = InstallSteps(plan);
  const auto lines = DescribePlan(plan, steps);
  const std::string all = Joined(lines);
  EXPECT_NE(all.find("will change file C:\\Program Files\\containerd\\config.toml: containerd's "
                     "pipe moves to \\\\.\\pipe\\containerd-behind-dxshim; its TTRPC pipe"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("will restart containerd only"), std::string::npos) << all;
  EXPECT_NE(all.find("  5. stop service containerd"), std::string::npos) << all;
  EXPECT_FALSE(DescribeWindow(steps, std::nullopt)) << "nothing ran yet";
  for (auto& s : steps) {
    s.state = Step::State::kDone;
    s.begun_unix_ms = s.done_unix_ms = 1000;
  }
  steps[10].done_unix_ms = 3250;
  EXPECT_EQ(DescribeWindow(steps, std::nullopt),
            "kubelet had no runtime for 2.250 s (from the stop of service containerd to the first "
            "CRI call answered through \\\\.\\pipe\\containerd-containerd)");
}

TEST(NodeInstallPhases, TheJournalKeepsEveryStepAndItsStateByteForByte) {
  InstallJournal journal;
  journal.mode = "takeover";
  journal.launcher = "x";
  journal.kubelet_service = "kubelet";
  journal.containerd_service = "containerd";
  journal.kubelet_pipe_before = journal.kubelet_pipe = "\\\\.\\pipe\\containerd-containerd";
  journal.moved_pipe = "\\\\.\\pipe\\m";
  journal.created_service = true;
  NodeChange change{NodeChange::Kind::kFile,
                    "C:\\a b\\c.yaml",
                    "",
                    false,
                    std::string("\xEF\xBB\xBFkey: \"v\"\r\n\t\0x", 17),
                    "after\n",
                    "why \"quoted\""};
  journal.changes = {change, {NodeChange::Kind::kRegistry, "K", "N", true, std::nullopt, "", ""}};
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  Procedure procedure{Procedure::Kind::kInstall, journal.changes, true, InstallSteps(Plan(node))};
  procedure.steps[1].state = Step::State::kBegun;
  procedure.steps[1].begun_unix_ms = 1234;
  procedure.steps[0].state = Step::State::kDone;
  procedure.steps.back().remove = true;
  journal.procedure = procedure;
  EXPECT_EQ(ReadInstallJournal(WriteInstallJournal(journal)), journal);
  EXPECT_THROW(ReadInstallJournal("{\"version\": 9}"), NodeError);
}

TEST(NodeInstallPhases, ApplyingAStepAgainDoesNothingAndAValueChangedMeanwhileStopsIt) {
  FakeNode node;
  BaseNode(node);
  Step write;
  write.change.target = "C:\\x.txt";
  write.change.after = "new";
  int saves = 0;
  StepContext context{node, nullptr, std::chrono::seconds(1), {}, [&] { ++saves; }, {}};
  std::vector<Step> steps = {write};
  RunSteps(steps, context);
  EXPECT_EQ(node.files["C:\\x.txt"], "new");
  EXPECT_EQ(saves, 2) << "journaled as begun, then as done";
  EXPECT_EQ(steps[0].state, Step::State::kDone);
  ApplyStep(write, context);  // again: already there
  node.files["C:\\x.txt"] = "someone else's";
  try {
    ApplyStep(write, context);
    ADD_FAILURE() << "a value changed meanwhile was overwritten";
  } catch (const NodeError& e) {
    EXPECT_NE(std::string(e.what()).find("file C:\\x.txt changed meanwhile"), std::string::npos);
  }
  Step start;
  start.kind = Step::Kind::kStart;
  start.service = "containerd";
  ApplyStep(start, context);
  EXPECT_EQ(node.service("containerd").starts, 0) << "it runs already";
}

TEST(NodeInstallPhases, TheProofBelievesOnlyThePipesServerAndNeedsEveryKubelet) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  const ProofTarget target{"\\\\.\\pipe\\dxshim", "dxshim"};
  EXPECT_EQ(CheckKubeletUses(node, probe, target).what, "the dxshim service does not run");
  node.files[kDxshimConfig] = "listen: npipe://./pipe/dxshim\r\n";
  node.AddService("dxshim", kDxshimCommand);
  node.pipes["\\\\.\\pipe\\dxshim"] = 77;  // somebody else's
  EXPECT_NE(CheckKubeletUses(node, probe, target).what.find("its server is pid 77"),
            std::string::npos);
  node.pipes["\\\\.\\pipe\\dxshim"] = node.service("dxshim").state.pid;
  const auto proof = CheckKubeletUses(node, probe, target);
  EXPECT_FALSE(proof.ok) << "the kubelet runs on containerd's pipe";
  EXPECT_NE(proof.what.find("has made no CRI call through \\\\.\\pipe\\dxshim"), std::string::npos)
      << proof.what;
}

TEST(NodeInstallPhases, RollBackUndoesOnlyWhatTheInstallInProgressBegan) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  InstallJournal journal;
  journal.mode = "endpoint";
  journal.kubelet_service = "kubelet";
  journal.containerd_service = "containerd";
  const auto plan = Plan(node);
  journal.procedure = Procedure{Procedure::Kind::kInstall, plan.changes, true, InstallSteps(plan)};
  auto& steps = journal.procedure->steps;
  StepContext context{node, nullptr, std::chrono::seconds(1), {}, [] {}, {}};
  for (std::size_t i = 0; i < 2; ++i) {  // the service made, kubelet's line written
    steps[i].state = Step::State::kDone;
    ApplyStep(steps[i], context);
  }
  const node::Undo undo = PlanUndo(node, journal, /*whole=*/false);
  EXPECT_TRUE(undo.refusals.empty());
  EXPECT_TRUE(undo.plan.delete_service);
  ASSERT_EQ(undo.plan.writes.size(), 1U);
  EXPECT_EQ(undo.plan.writes[0].change.after, steps[1].change.before);
  EXPECT_TRUE(undo.plan.restart_launcher);
  // A value the install in progress never reached is not touched, whatever it holds.
  node.service("kubelet").state.dependencies = {"someone"};
  EXPECT_EQ(PlanUndo(node, journal, false).plan.writes.size(), 1U);
}

}  // namespace
}  // namespace dxshim::node::test
