// Which runtime handler runs each sandbox (shim/gpu/sandbox_handlers.h): learned from relayed
// RunPodSandbox calls and from the runtime's listing, without losing a sandbox started while a
// listing was under way.
#include "shim/gpu/sandbox_handlers.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

TEST(SandboxHandlers, LearnsFromCallsAndListings) {
  SandboxHandlers h;
  EXPECT_FALSE(h.Find("a").has_value());
  h.Started("a", "vm");
  EXPECT_EQ(h.Find("a"), "vm");
  // A listing taken before "b" started, answered after: "b" is kept, "a" was not listed and is
  // older than the listing: gone; "c" (made behind dxshim's back) is learned.
  const auto mark = h.Mark();
  h.Started("b", "");
  h.Reconcile({{"c", "vm"}}, mark);
  EXPECT_FALSE(h.Find("a").has_value());
  EXPECT_EQ(h.Find("b"), "");
  EXPECT_EQ(h.Find("c"), "vm");
  // The next listing no longer has "b": dropped. Removal is seen at once.
  h.Reconcile({{"c", "vm"}}, h.Mark());
  EXPECT_FALSE(h.Find("b").has_value());
  h.Removed("c");
  EXPECT_FALSE(h.Find("c").has_value());
}

}  // namespace
}  // namespace dxshim
