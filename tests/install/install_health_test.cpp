// What doctor reports of an installed node (shim/install/install_health.h): every state the issue
// of a safe install names, each made on an in-memory node the way it happens on a real one.
#include "shim/install/install_health.h"

#include <gtest/gtest.h>

#include "shim/install/edit/containerd_config.h"
#include "shim/install/installer.h"
#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

using Level = InstallFinding::Level;

std::string Lines(const std::vector<InstallFinding>& findings) {
  std::string out;
  for (const auto& f : findings) out += f.what + " | " + f.fix + "\n";
  return out;
}

bool Has(const std::vector<InstallFinding>& findings, Level level, const std::string& text) {
  return std::any_of(findings.begin(), findings.end(), [&](const InstallFinding& f) {
    return f.level == level && f.what.find(text) != std::string::npos;
  });
}

TEST(NodeInstallHealth, NothingInstalledSaysNothing) {
  FakeNode node;
  BaseNode(node);
  EXPECT_TRUE(InstallHealth(node, kRecord).empty());
}

TEST(NodeInstallHealth, ATakeoverWhoseTtrpcPipeMovedIsReported) {
  FakeNode node;
  BaseNode(node);
  AksShape(node);
  FakeProbe probe(node);
  ASSERT_EQ(Install(node, probe, Options()), kInstalled);
  auto findings = InstallHealth(node, kRecord);
  EXPECT_TRUE(Has(findings, Level::kOk, "installed in takeover mode")) << Lines(findings);
  EXPECT_TRUE(Has(findings, Level::kOk,
                  "containerd's TTRPC pipe stays \\\\.\\pipe\\containerd-containerd.ttrpc, served"))
      << Lines(findings);
  // The config rewritten with the TTRPC address following the moved pipe, as before the fix.
  node.files[kContainerdConfig] =
      SetServerAddress(node.files[kContainerdConfig], ContainerdServer::kTtrpc, "");
  findings = InstallHealth(node, kRecord);
  EXPECT_TRUE(Has(findings, Level::kFailed,
                  "containerd's TTRPC pipe moved from \\\\.\\pipe\\containerd-containerd.ttrpc to "
                  "\\\\.\\pipe\\containerd-behind-dxshim.ttrpc"))
      << Lines(findings);
}

TEST(NodeInstallHealth, ADependencyLostToRestartKubeletIsReported) {
  FakeNode node;
  BaseNode(node);
  CapzNativeShape(node);
  FakeProbe probe(node);
  ASSERT_EQ(Install(node, probe, Options()), kInstalled);
  EXPECT_FALSE(Has(InstallHealth(node, kRecord), Level::kWarning, "no longer depends"));
  node.service("kubelet").state.dependencies = {"containerd"};  // RestartKubelet.ps1's depend=
  const auto findings = InstallHealth(node, kRecord);
  EXPECT_TRUE(Has(findings, Level::kWarning, "service kubelet no longer depends on dxshim"))
      << Lines(findings);
  // A re-run of install puts it back.
  ASSERT_EQ(Install(node, probe, Options()), kInstalled);
  EXPECT_FALSE(Has(InstallHealth(node, kRecord), Level::kWarning, "no longer depends"));
}

TEST(NodeInstallHealth, AnInterruptedRunIsReportedWithItsNextStep) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  auto o = Options();
  struct Killed {};
  o.interrupt = [](std::size_t step, StepPoint at) {
    if (step == 2 && at == StepPoint::kDone) throw Killed{};
  };
  EXPECT_THROW(Install(node, probe, o), Killed);
  const auto findings = InstallHealth(node, kRecord);
  EXPECT_TRUE(Has(findings, Level::kFailed,
                  "an interrupted install stopped after step 3 of 7 (next: wait for "
                  "\\\\.\\pipe\\dxshim served by dxshim)"))
      << Lines(findings);
}

}  // namespace
}  // namespace dxshim::install::test
