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

// Every text field stays a string, whatever it reads as in JSON or YAML (a service named "null" is
// not a missing one), and an empty list is written as one.
TEST(NodeInstallJournal, TextThatReadsAsANumberOrNullStaysText) {
  InstallJournal journal;
  journal.mode = "null";
  journal.launcher = "true";
  journal.kubelet_service = "123";
  journal.containerd_service = "1e5";
  journal.dxshim_service = "~";
  journal.kubelet_pipe = "";
  journal.procedure = Procedure{Procedure::Kind::kUninstall, {}, false, {}};
  const std::string text = WriteInstallJournal(journal);
  EXPECT_NE(text.find("\"mode\": \"null\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"containerdService\": \"1e5\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"version\": 2,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"steps\": []"), std::string::npos) << text;
  EXPECT_EQ(ReadInstallJournal(text), journal) << text;
}

}  // namespace
}  // namespace dxshim::install::test
