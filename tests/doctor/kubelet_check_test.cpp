// Whether kubelet points at dxshim, from the kubelets found (the search itself runs against real
// processes in doctor_e2e_test and against wine's service manager in windows_doctor_e2e_test):
// ✗ naming both endpoints for a kubelet that bypasses dxshim, ! for one whose configuration cannot
// be read, ! when there is none.
#include "shim/doctor/kubelet_check.h"

#include <gtest/gtest.h>

namespace dxshim::doctor {
namespace {

TEST(CheckKubelet, FailsNamingBothEndpointsWhenKubeletBypassesDxshim) {
  KubeletSearch search;
  search.seen.push_back({"the kubelet service (NSSM, kubelet.exe) at its next start",
                         "npipe://./pipe/dxshim", "NSSM's AppParameters HKLM\\...\\Parameters"});
  search.seen.push_back(
      {"kubelet.exe (pid 812)", "npipe:////./pipe/containerd-containerd", "its command line"});
  const auto check = CheckKubelet(search, "npipe://./pipe/dxshim");
  EXPECT_EQ(check.status, Status::kFailed);
  EXPECT_EQ(check.detail,
            "kubelet.exe (pid 812) uses npipe:////./pipe/containerd-containerd (its command "
            "line), not dxshim's npipe://./pipe/dxshim");
  EXPECT_EQ(check.fix.rfind("point kubelet at npipe://./pipe/dxshim", 0), 0u);
}

TEST(CheckKubelet, IsOkWhenEveryKubeletUsesDxshim) {
  KubeletSearch search;
  search.seen.push_back({"kubelet (pid 7)", "/run/dxshim/dxshim.sock", "its flag"});
  const auto check = CheckKubelet(search, "unix:///run/dxshim/dxshim.sock");
  EXPECT_EQ(check.status, Status::kOk);
  EXPECT_EQ(check.detail, "kubelet (pid 7) uses /run/dxshim/dxshim.sock (its flag)");
}

TEST(CheckKubelet, WarnsWhenThereIsNoKubeletOrOneCannotBeRead) {
  EXPECT_EQ(CheckKubelet({}, "npipe://./pipe/dxshim").status, Status::kWarning);
  KubeletSearch search;
  search.problems.push_back(
      "kubelet (pid 9): kubelet's config file /var/lib/kubelet/config.yaml does not exist");
  const auto check = CheckKubelet(search, "unix:///run/dxshim/dxshim.sock");
  EXPECT_EQ(check.status, Status::kWarning);
  EXPECT_EQ(check.detail, search.problems[0]);
  EXPECT_EQ(check.fix.rfind("run doctor elevated", 0), 0u);
}

TEST(CheckKubelet, AnUnreadableKubeletDoesNotHideOneThatBypassesDxshim) {
  KubeletSearch search;
  search.seen.push_back(
      {"kubelet.exe (pid 812)", "npipe:////./pipe/containerd-containerd", "its command line"});
  search.problems.push_back("the kubelet service: NSSM runs supervisor.exe");
  const auto check = CheckKubelet(search, "npipe://./pipe/dxshim");
  EXPECT_EQ(check.status, Status::kFailed);
  EXPECT_EQ(check.detail,
            "kubelet.exe (pid 812) uses npipe:////./pipe/containerd-containerd (its command "
            "line), not dxshim's npipe://./pipe/dxshim; the kubelet service: NSSM runs "
            "supervisor.exe");
}

}  // namespace
}  // namespace dxshim::doctor
