// The plan of an install (shim/node/install_plan.h): every change and service decision computed
// before anything changes.
#include "shim/node/install_plan.h"

#include <gtest/gtest.h>

#include "shim/node/containerd_config.h"
#include "tests/node/fake_launchers.h"

namespace dxshim::node::test {
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

}  // namespace
}  // namespace dxshim::node::test
