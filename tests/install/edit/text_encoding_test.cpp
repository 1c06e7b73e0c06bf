// Text as the installer reads it (shim/install/edit/text_encoding.h): a script Windows
// PowerShell 5.1 wrote as UTF-16LE (AKS's kubeletstart.ps1 written by Out-File, say) reads as its
// UTF-8 text.
#include "shim/install/edit/text_encoding.h"

#include <gtest/gtest.h>

namespace dxshim::install {
namespace {

std::string Utf16Le(const std::u16string& text) {
  std::string bytes = "\xFF\xFE";
  for (const char16_t unit : text) {
    bytes += static_cast<char>(unit & 0xFF);
    bytes += static_cast<char>(unit >> 8);
  }
  return bytes;
}

TEST(NodeTextEncoding, Utf16LeWithItsMarkReadsAsUtf8) {
  EXPECT_EQ(TextOf(Utf16Le(u"$KubeletArgList += \"--container-runtime-endpoint=x\"\r\n")),
            "$KubeletArgList += \"--container-runtime-endpoint=x\"\r\n");
  EXPECT_EQ(TextOf(Utf16Le(u"é€😀")), "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(TextOf("\xEF\xBB\xBFplain"), "plain");
  EXPECT_EQ(TextOf("plain"), "plain");
  std::string out;
  AppendUtf8(out, 0x5c);
  EXPECT_EQ(out, "\\");
}

}  // namespace
}  // namespace dxshim::install
