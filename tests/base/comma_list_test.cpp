// Comma lists (shim/base/comma_list.h): split at every ',', blanks around each item dropped, empty
// items kept for the caller to judge; joined so that the split reads each item back.
#include "shim/base/comma_list.h"

#include <gtest/gtest.h>

#include <string>
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

TEST(CommaList, JoinIsReadBackBySplit) {
  const std::vector<std::string> ids = {"gpu-0", "mem-1a-2", "x y"};
  EXPECT_EQ(JoinCommaList(ids), "gpu-0,mem-1a-2,x y");
  const std::string joined = JoinCommaList(ids);
  const auto back = SplitCommaList(joined);
  EXPECT_EQ(std::vector<std::string>(back.begin(), back.end()), ids);
  EXPECT_EQ(JoinCommaList(std::vector<std::string>{}), "");
  EXPECT_EQ(JoinCommaList(std::vector<std::string>{"one"}), "one");
}

TEST(CommaList, JoinTakesAProjectionAndASeparator) {
  struct Gpu {
    std::string id;
    int memory;
  };
  const std::vector<Gpu> gpus = {{"a", 1}, {"b", 2}};
  EXPECT_EQ(JoinCommaList(gpus, &Gpu::id), "a,b");
  EXPECT_EQ(JoinList(gpus, ", ", [](const Gpu& g) { return std::to_string(g.memory); }), "1, 2");
  EXPECT_EQ(JoinList(std::vector<std::string_view>{"x", "", "z"}, " | "), "x |  | z");
}

}  // namespace
}  // namespace dxshim
