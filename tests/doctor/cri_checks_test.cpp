// The parts of doctor's CRI checks that need no runtime: containerd versions read as major and
// minor (Debian's "1.6.20~ds1", upstream's "v1.7.2"), runtime handlers and whether each runs pods
// in virtual machines read from containerd's verbose Status "config" (the shape below is what
// containerd 1.6.20 returned for scripts/containerd-config.sh, trimmed), and the
// vm-runtime-handlers lines made from them. Through a real containerd: doctor_e2e_test.
#include "shim/doctor/cri_checks.h"

#include <gtest/gtest.h>

namespace dxshim::doctor {
namespace {

// containerd 1.6.20's Status(verbose).info["config"], "containerd" part, as it answered.
constexpr char kContainerdConfig[] = R"({"containerd": {
  "snapshotter": "overlayfs", "defaultRuntimeName": "runc",
  "defaultRuntime": {"runtimeType": "", "options": null},
  "runtimes": {
    "dxshim-test-vm": {"runtimeType": "io.containerd.runc.v2", "runtimePath": "",
                       "options": {"SandboxIsolation": 1},
                       "privileged_without_host_devices": false},
    "runc": {"runtimeType": "io.containerd.runc.v2", "options": null},
    "runc-systemd": {"runtimeType": "io.containerd.runc.v2",
                     "options": {"SystemdCgroup": true, "BinaryName": ""}},
    "no-type": {"options": {}},
    "runhcs-wcow-process": {"runtimeType": "io.containerd.runhcs.v1",
                            "options": {"SandboxIsolation": 0}},
    "kata": {"runtimeType": "io.containerd.kata.v2", "options": null}
  }},
  "cni": {"binDir": "/opt/cni/bin"}})";

TEST(MajorMinor, ReadsContainerdsVersionsAsTheyAreWritten) {
  EXPECT_EQ(MajorMinor("1.6.20~ds1"), (std::pair{1, 6}));
  EXPECT_EQ(MajorMinor("v1.7.2"), (std::pair{1, 7}));
  EXPECT_EQ(MajorMinor("v2.0.0-rc.1"), (std::pair{2, 0}));
  EXPECT_EQ(MajorMinor("1.10.0"), (std::pair{1, 10}));
  EXPECT_FALSE(MajorMinor("").has_value());
  EXPECT_FALSE(MajorMinor("v").has_value());
  EXPECT_FALSE(MajorMinor("1").has_value());
  EXPECT_FALSE(MajorMinor("one.two").has_value());
}

TEST(HandlersOfConfig, TellsVirtualMachineHandlersByTheirIsolationOrKata) {
  const auto handlers = HandlersOfConfig(kContainerdConfig);
  ASSERT_TRUE(handlers.has_value());
  EXPECT_EQ(*handlers, (std::map<std::string, bool>{{"dxshim-test-vm", true},
                                                    {"kata", true},
                                                    {"no-type", false},
                                                    {"runc", false},
                                                    {"runc-systemd", false},
                                                    {"runhcs-wcow-process", false}}));
}

TEST(HandlersOfConfig, SaysNothingWhenTheRuntimeDoesNot) {
  EXPECT_FALSE(HandlersOfConfig("").has_value());
  EXPECT_FALSE(HandlersOfConfig("not json {").has_value());
  EXPECT_FALSE(HandlersOfConfig(R"({"cni": {}})").has_value());
  EXPECT_FALSE(HandlersOfConfig(R"({"containerd": {"runtimes": null}})").has_value());
}

TEST(CheckVmHandlers, ListsWhatIsConfiguredAndWarnsOfWhatIsMissingOrMisspelt) {
  const auto handlers = HandlersOfConfig(kContainerdConfig);
  // Both VM handlers listed: one ok line.
  auto checks = CheckVmHandlers({"dxshim-test-vm", "kata"}, handlers);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kOk);
  EXPECT_EQ(checks[0].detail, "dxshim-test-vm, kata: GPU requests in their pods are refused");

  // kata missing, and a handler the runtime does not have.
  checks = CheckVmHandlers({"dxshim-test-vm", "runhcs-wcow-hypervisor"}, handlers);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[1].status, Status::kWarning);
  EXPECT_NE(checks[1].detail.find("handler kata runs pods in virtual machines"), std::string::npos);
  EXPECT_EQ(checks[1].fix.rfind("add kata to vm-runtime-handlers", 0), 0u);
  EXPECT_EQ(checks[2].status, Status::kWarning);
  EXPECT_EQ(checks[2].detail,
            "runhcs-wcow-hypervisor is not one of the runtime's handlers (dxshim-test-vm, kata, "
            "no-type, runc, runc-systemd, runhcs-wcow-process)");

  // A runtime that does not say: only what is configured.
  checks = CheckVmHandlers({}, std::nullopt);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].detail, "none listed: every runtime handler gets GPUs");
}

}  // namespace
}  // namespace dxshim::doctor
