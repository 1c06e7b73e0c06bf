// JSON text (shim/base/json_text.h): string literals with their escapes (short ones for \n \r \t,
// \u00XX for other control characters and DEL, UTF-8 as it is) and JSON's number grammar.
#include "shim/base/json_text.h"

#include <gtest/gtest.h>

#include <utility>

namespace dxshim {
namespace {

TEST(JsonText, StringLiterals) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "\"\""},
      {"NVIDIA Tesla T4", "\"NVIDIA Tesla T4\""},
      {"\x01\\\"\n", "\"\\u0001\\\\\\\"\\n\""},
      {"a\tb\rc\x7f", "\"a\\tb\\rc\\u007f\""},
      {"C:\\Windows", "\"C:\\\\Windows\""},
      {"gr\xc3\xbc\xc3\x9f", "\"gr\xc3\xbc\xc3\x9f\""},  // UTF-8 as it is
  };
  for (const auto& [text, literal] : cases) EXPECT_EQ(JsonString(text), literal) << text;
}

TEST(JsonText, NumberGrammar) {
  for (const char* number : {"0", "-0", "12", "-3.25", "1e9", "2.5E-3", "0.0"}) {
    EXPECT_TRUE(IsJsonNumber(number)) << number;
  }
  for (const char* other : {"", "-", "01", "1.", ".5", "1e", "0x10", "+1", "1 ", "NaN"}) {
    EXPECT_FALSE(IsJsonNumber(other)) << other;
  }
}

}  // namespace
}  // namespace dxshim
