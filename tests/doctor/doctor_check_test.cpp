// doctor's exit code and status words: 1 only when a check failed (warnings leave it 0), and the
// words the JSON output carries.
#include "shim/doctor/doctor_check.h"

#include <gtest/gtest.h>

namespace dxshim::doctor {
namespace {

TEST(ExitCode, IsOneOnlyWhenACheckFailed) {
  EXPECT_EQ(ExitCode({}), 0);
  EXPECT_EQ(ExitCode({Ok("a", "fine"), Warning("b", "odd", "look")}), 0);
  EXPECT_EQ(ExitCode({Ok("a", "fine"), Failed("c", "broken", "mend")}), 1);
}

TEST(StatusWord, IsWhatTheJsonOutputSays) {
  EXPECT_STREQ(StatusWord(Status::kOk), "ok");
  EXPECT_STREQ(StatusWord(Status::kWarning), "warning");
  EXPECT_STREQ(StatusWord(Status::kFailed), "failed");
}

}  // namespace
}  // namespace dxshim::doctor
