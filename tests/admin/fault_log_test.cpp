// The metrics endpoint's log of client faults (shim/admin/fault_log.h): however many faults
// happen, at most one line per interval, each counting what happened since the one before.
#include "shim/admin/fault_log.h"

#include <gtest/gtest.h>

#include <vector>

namespace dxshim::admin {
namespace {

using std::chrono::milliseconds;

TEST(FaultLog, OneLinePerIntervalWithCounts) {
  std::vector<std::string> lines;
  FaultLog log([&](const std::string& line) { lines.push_back(line); }, milliseconds(1000));
  const auto t0 = FaultLog::Clock::now();
  log.Note("requests not complete within 2000 ms", "127.0.0.1", "", t0);
  ASSERT_EQ(lines.size(), 1u) << "the first fault is told at once";
  EXPECT_EQ(lines[0],
            "metrics endpoint: 1 x requests not complete within 2000 ms (last: 127.0.0.1)");
  for (int i = 1; i < 1000; ++i) {
    log.Note("malformed requests", "10.0.0.7", "not a path: \"x\"", t0 + milliseconds(i));
    log.Note("connections over 32 from one address (the oldest closed)", "10.0.0.8", "",
             t0 + milliseconds(i));
    log.Flush(t0 + milliseconds(i));
  }
  EXPECT_EQ(lines.size(), 1u) << "nothing more within the second";
  log.Flush(t0 + milliseconds(1000));
  ASSERT_EQ(lines.size(), 2u) << "one more line, a second after the first";
  EXPECT_EQ(lines[1],
            "metrics endpoint: 999 x connections over 32 from one address (the oldest closed), "
            "999 x malformed requests (last: 10.0.0.8)");
  log.Flush(t0 + milliseconds(5000));
  EXPECT_EQ(lines.size(), 2u) << "nothing new, nothing written";
  log.Note("malformed requests", "10.0.0.9", "not a path: \"y\"", t0 + milliseconds(5000));
  ASSERT_EQ(lines.size(), 3u) << "after a quiet second a fault is told at once again";
  EXPECT_EQ(lines[2],
            "metrics endpoint: 1 x malformed requests (last: 10.0.0.9: not a path: \"y\")");
}

TEST(FaultLog, AFaultNoClientIsToBlameForNamesWhatHappened) {
  std::vector<std::string> lines;
  FaultLog log([&](const std::string& line) { lines.push_back(line); });
  log.Note("accepts failed", "", "Too many open files (24)", FaultLog::Clock::now());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "metrics endpoint: 1 x accepts failed (last: Too many open files (24))");
}

}  // namespace
}  // namespace dxshim::admin
