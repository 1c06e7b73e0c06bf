// One step of a procedure (shim/install/install_step.h): journaled as begun and done, applied again
// without effect, stopped by a value changed meanwhile.
#include "shim/install/install_step.h"

#include <gtest/gtest.h>

#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeInstallStep, ApplyingAStepAgainDoesNothingAndAValueChangedMeanwhileStopsIt) {
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

}  // namespace
}  // namespace dxshim::install::test
