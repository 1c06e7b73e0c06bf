// Every step of install, uninstall and rollback survives an interruption: the run is killed at
// each point of each step in turn (journaled as begun, applied, journaled as done), and from what
// it left, both a re-run and an uninstall leave the node exactly as they should: a re-run of
// install as an install that was never interrupted, an uninstall as the node before install.
// The kill is an exception no phase catches (Killed is not a std::exception), as a killed process
// catches nothing. tests/e2e/node_install_interruption_test.sh kills the real dxshim.exe under
// wine the same way.
#include <gtest/gtest.h>

#include "shim/node/installer.h"
#include "tests/node/fake_launchers.h"

namespace dxshim::node::test {
namespace {

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
}  // namespace dxshim::node::test
