// CriCallers (shim/proxy/cri_callers.h): one record per client, and the first call of a watched
// program reported once, with the client, and never for another program or a later call.
#include "shim/proxy/cri_callers.h"

#include <gtest/gtest.h>

#include <vector>

namespace dxshim {
namespace {

TEST(CriCallers, CountsEachClientOnce) {
  CriCallers callers;
  callers.Called({7, "crictl.exe"}, 1000);
  callers.Called({7, "crictl.exe"}, 2000);
  callers.Called({9, "kubelet.exe"}, 3000);
  const auto records = callers.Snapshot();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].calls, 2u);
  EXPECT_EQ(records[0].first_call_unix_ms, 1000);
  EXPECT_EQ(records[0].last_call_unix_ms, 2000);
  EXPECT_EQ(records[1].client.program, "kubelet.exe");
}

TEST(CriCallers, TheFirstCallOfTheWatchedProgramIsReportedOnce) {
  CriCallers callers;
  std::vector<CriClient> seen;
  callers.OnFirstCallOf("kubelet.exe", [&seen](const CriClient& c) { seen.push_back(c); });
  callers.Called({7, "crictl.exe"}, 1);
  callers.Called({5, "kubelet.exe.bak"}, 1);
  EXPECT_TRUE(seen.empty());
  callers.Called({9, "kubelet.exe"}, 2);
  callers.Called({9, "kubelet.exe"}, 3);
  callers.Called({11, "kubelet.exe"}, 4);  // a restarted kubelet: already reported
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].pid, 9u);
}

TEST(CriCallers, AWatchAfterKubeletsFirstCallWaitsForANewClient) {
  CriCallers callers;
  callers.Called({9, "kubelet.exe"}, 1);
  int reports = 0;
  callers.OnFirstCallOf("kubelet.exe", [&reports](const CriClient&) { ++reports; });
  callers.Called({9, "kubelet.exe"}, 2);
  EXPECT_EQ(reports, 0);  // set it before calls can arrive (serve does)
  callers.OnFirstCallOf("", nullptr);
  callers.Called({12, "kubelet.exe"}, 3);
  EXPECT_EQ(reports, 0);
}

}  // namespace
}  // namespace dxshim
