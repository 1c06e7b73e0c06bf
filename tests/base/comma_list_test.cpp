// Comma lists (shim/base/comma_list.h): split at every ',', blanks around each item dropped, empty
// items kept for the caller to judge.
#include "shim/base/comma_list.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace dxshim {
namespace {

using Items = std::vector<std::string_view>;

TEST(CommaList, SplitsAndTrimsBlanks) {
  EXPECT_EQ(SplitCommaList("a,b,c"), (Items{"a", "b", "c"}));
  EXPECT_EQ(SplitCommaList(" a ,\tb\t, c"), (Items{"a", "b", "c"}));
  EXPECT_EQ(SplitCommaList("one"), (Items{"one"}));
  EXPECT_EQ(SplitCommaList("a b, c"), (Items{"a b", "c"})) << "blanks inside an item stay";
}

TEST(CommaList, KeepsEmptyItems) {
  EXPECT_EQ(SplitCommaList(""), (Items{""}));
  EXPECT_EQ(SplitCommaList("a,,b"), (Items{"a", "", "b"}));
  EXPECT_EQ(SplitCommaList(",a,"), (Items{"", "a", ""}));
  EXPECT_EQ(SplitCommaList("a, ,b"), (Items{"a", "", "b"}));
}

TEST(CommaList, TrimBlanks) {
  EXPECT_EQ(TrimBlanks("  x \t"), "x");
  EXPECT_EQ(TrimBlanks(" \t "), "");
  EXPECT_EQ(TrimBlanks("x\n"), "x\n") << "only spaces and tabs";
}

}  // namespace
}  // namespace dxshim
