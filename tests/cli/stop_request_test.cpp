// How serve learns it must stop (shim/cli/stop_request.h): a request from another thread ends
// the wait with its reason.
#include "shim/cli/stop_request.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace dxshim {
namespace {

// On its own thread, so that the stop signals are blocked there and not in the test runner.
TEST(StopRequest, ARequestFromAnotherThreadEndsTheWaitWithItsReason) {
  std::string reason;
  std::thread waiter([&] {
    StopRequest stop;
    std::thread asker([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stop.Request("service stop");
    });
    reason = stop.Wait();
    asker.join();
  });
  waiter.join();
  EXPECT_EQ(reason, "service stop");
}

}  // namespace
}  // namespace dxshim
