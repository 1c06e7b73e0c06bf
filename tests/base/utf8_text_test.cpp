// The UTF-8 check (shim/base/utf8_text.h): every well-formed sequence passes, from one to four
// bytes and at each end of each range; each kind of ill-formed one is found, with its offset, and
// shown as \xHH in messages that stay valid UTF-8 themselves.
#include "shim/base/utf8_text.h"

#include <gtest/gtest.h>

#include <string>

namespace dxshim {
namespace {

TEST(Utf8Text, WellFormedSequencesPass) {
  for (const std::string& valid : {
           std::string(),
           std::string("plain ASCII, with a tab\t"),
           std::string("\0 NUL is a character", 20),
           std::string("\x7f"),              // U+007F, the last one-byte
           std::string("\xc2\x80"),          // U+0080, the first two-byte
           std::string("\xc3\xb1"),          // ñ
           std::string("\xdf\xbf"),          // U+07FF
           std::string("\xe0\xa0\x80"),      // U+0800, the first three-byte
           std::string("\xe2\x82\xac"),      // €
           std::string("\xe6\xbc\xa2"),      // 漢
           std::string("\xed\x9f\xbf"),      // U+D7FF, just below the surrogates
           std::string("\xee\x80\x80"),      // U+E000, just above them
           std::string("\xef\xbf\xbf"),      // U+FFFF
           std::string("\xf0\x90\x80\x80"),  // U+10000, the first four-byte
           std::string("\xf0\x9f\x98\x80"),  // 😀
           std::string("\xf4\x8f\xbf\xbf"),  // U+10FFFF, the last code point
           std::string("C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_"
                       "\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2\\nvcuda64.dll"),
       }) {
    EXPECT_TRUE(IsValidUtf8(valid)) << EscapeInvalidUtf8(valid);
    EXPECT_EQ(InvalidUtf8Offset(valid), std::string::npos);
    EXPECT_EQ(EscapeInvalidUtf8(valid), valid);
    EXPECT_FALSE(Utf8Problem(valid).has_value());
  }
}

TEST(Utf8Text, EachIllFormedKindIsFoundWhereItBegins) {
  struct Case {
    std::string text;
    std::size_t offset;
    const char* kind;
  };
  const Case cases[] = {
      {"ab\x80", 2, "a lone continuation byte"},
      {"\xbf", 0, "a lone continuation byte"},
      {"\xc0\xaf", 0, "overlong '/' in two bytes (C0)"},
      {"\xc1\xbf", 0, "overlong two-byte (C1)"},
      {"\xe0\x80\xaf", 0, "overlong '/' in three bytes"},
      {"\xe0\x9f\xbf", 0, "overlong U+07FF in three bytes"},
      {"\xf0\x80\x80\xaf", 0, "overlong '/' in four bytes"},
      {"\xf0\x8f\xbf\xbf", 0, "overlong U+FFFF in four bytes"},
      {"x\xed\xa0\x80", 1, "surrogate U+D800 (CESU-8)"},
      {"\xed\xbf\xbf", 0, "surrogate U+DFFF"},
      {"\xed\xa0\xbd\xed\xb8\x80", 0, "a surrogate pair in CESU-8"},
      {"\xf4\x90\x80\x80", 0, "U+110000, above U+10FFFF"},
      {"\xf5\x80\x80\x80", 0, "F5: no code point"},
      {"\xff", 0, "FF: never in UTF-8"},
      {"\xfe", 0, "FE: never in UTF-8"},
      {"\xc3", 0, "a two-byte sequence cut short at the end"},
      {"ok\xe2\x82", 2, "a three-byte sequence cut short at the end"},
      {"\xf0\x9f\x98", 0, "a four-byte sequence cut short at the end"},
      {"\xc3(", 0, "a two-byte sequence cut short by ASCII"},
      {"\xe2\x28\xa1", 0, "a three-byte sequence with a bad second byte"},
      {"\xe2\x82\x28", 0, "a three-byte sequence with a bad third byte"},
      {"\xf0\x9f\x98\x28", 0, "a four-byte sequence with a bad fourth byte"},
      {"\xc3\xb1\xc3", 2, "valid, then cut short"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    EXPECT_FALSE(IsValidUtf8(c.text));
    EXPECT_EQ(InvalidUtf8Offset(c.text), c.offset);
    const auto problem = Utf8Problem(c.text);
    ASSERT_TRUE(problem.has_value());
    EXPECT_TRUE(IsValidUtf8(*problem)) << "the message itself must be valid UTF-8";
    EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8(c.text)));
  }
}

TEST(Utf8Text, MessagesShowTheBadBytes) {
  EXPECT_EQ(EscapeInvalidUtf8("gpu-\xc3(\xc3\xb1"), "gpu-\\xC3(\xc3\xb1");
  EXPECT_EQ(EscapeInvalidUtf8("\xed\xa0\x80"), "\\xED\\xA0\\x80");
  EXPECT_EQ(EscapeInvalidUtf8("nv\xff.dll"), "nv\\xFF.dll");
  EXPECT_EQ(Utf8Problem("gpu-\xc3("), "is not valid UTF-8 (byte 0xC3 at offset 4 of 'gpu-\\xC3(')");
  EXPECT_EQ(Utf8Problem("\xe2\x82\xac\xf4\x90\x80\x80"),
            "is not valid UTF-8 (byte 0xF4 at offset 3 of '\xe2\x82\xac\\xF4\\x90\\x80\\x80')");
}

}  // namespace
}  // namespace dxshim
