// What undoing an install means for the node now (shim/install/undo_plan.h).
#include "shim/install/undo_plan.h"

#include <gtest/gtest.h>

#include "shim/install/install_procedure.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeUndoPlan, RollBackUndoesOnlyWhatTheInstallInProgressBegan) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  InstallJournal journal;
  journal.mode = "endpoint";
  journal.kubelet_service = "kubelet";
  journal.containerd_service = "containerd";
  const auto plan = PlanOf(node);
  journal.procedure = Procedure{Procedure::Kind::kInstall, plan.changes, true, InstallSteps(plan)};
  auto& steps = journal.procedure->steps;
  StepContext context{node, nullptr, std::chrono::seconds(1), {}, [] {}, {}};
  for (std::size_t i = 0; i < 2; ++i) {  // the service made, kubelet's line written
    steps[i].state = Step::State::kDone;
    ApplyStep(steps[i], context);
  }
  const install::Undo undo = PlanUndo(node, journal, /*whole=*/false);
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
}  // namespace dxshim::install::test
