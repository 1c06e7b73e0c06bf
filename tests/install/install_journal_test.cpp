// The install journal (shim/install/install_journal.h) written and read back: every value byte for
// byte, every step with its state.
#include "shim/install/install_journal.h"

#include <gtest/gtest.h>

#include "shim/install/install_procedure.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeInstallJournal, TheJournalKeepsEveryStepAndItsStateByteForByte) {
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
  Procedure procedure{Procedure::Kind::kInstall, journal.changes, true, InstallSteps(PlanOf(node))};
  procedure.steps[1].state = Step::State::kBegun;
  procedure.steps[1].begun_unix_ms = 1234;
  procedure.steps[0].state = Step::State::kDone;
  procedure.steps.back().remove = true;
  journal.procedure = procedure;
  EXPECT_EQ(ReadInstallJournal(WriteInstallJournal(journal)), journal);
  EXPECT_THROW(ReadInstallJournal("{\"version\": 9}"), NodeError);
}

}  // namespace
}  // namespace dxshim::install::test
