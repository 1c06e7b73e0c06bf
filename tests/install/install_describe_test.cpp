// What install says (shim/install/install_describe.h): every change and step, and how long kubelet
// had no runtime.
#include "shim/install/install_describe.h"

#include <gtest/gtest.h>

#include "shim/install/install_procedure.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeInstallDescribe, DescribeSaysEveryChangeAndStepAndTheWindow) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  const auto plan = PlanOf(node);
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

TEST(NodeInstallDescribe, StepsAreNumberedFromOneAsAnInterruptedRunNamesThem) {
  Step first;
  first.kind = Step::Kind::kStop;
  first.service = "containerd";
  Step second;
  second.kind = Step::Kind::kStart;
  second.service = "containerd";
  const auto lines = DescribeSteps({first, second});
  ASSERT_EQ(lines.size(), 3u) << Joined(lines);
  EXPECT_EQ(lines[0], "steps, each journaled before and after it is applied:");
  EXPECT_EQ(lines[1], "  1. stop service containerd");
  EXPECT_EQ(lines[2], "  2. start service containerd");
}

}  // namespace
}  // namespace dxshim::install::test
