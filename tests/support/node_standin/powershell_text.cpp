// Decoding and encoding file text as PowerShell 5.1 does.
#include "tests/support/node_standin/powershell_text.h"

#include <cstddef>
#include <cstdint>

#include "tests/support/node_standin/powershell_value.h"
#include "tests/support/node_standin/utf8.h"

namespace dxshim::test::node_standin::powershell {

namespace {

std::string FromUtf16(const std::string& bytes, std::size_t start, bool big_endian) {
  std::string out;
  for (std::size_t i = start; i + 1 < bytes.size(); i += 2) {
    const std::uint32_t a = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b = static_cast<unsigned char>(bytes[i + 1]);
    std::uint32_t unit = big_endian ? (a << 8 | b) : (b << 8 | a);
    if (unit >= 0xD800 && unit < 0xDC00 && i + 3 < bytes.size()) {
      const std::uint32_t c = static_cast<unsigned char>(bytes[i + 2]);
      const std::uint32_t d = static_cast<unsigned char>(bytes[i + 3]);
      const std::uint32_t low = big_endian ? (c << 8 | d) : (d << 8 | c);
      if (low >= 0xDC00 && low < 0xE000) {
        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        i += 2;
      }
    }
    AppendUtf8(out, unit);
  }
  return out;
}

// The code points of UTF-8 TEXT (a stray or truncated byte taken as itself).
std::vector<std::uint32_t> CodePoints(const std::string& text) {
  std::vector<std::uint32_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (i + extra >= text.size()) extra = 0;
    const std::uint32_t lead_bits = extra == 3   ? 0x07u
                                    : extra == 2 ? 0x0Fu
                                    : extra == 1 ? 0x1Fu
                                                 : 0xFFu;
    std::uint32_t code = c & lead_bits;
    for (std::size_t k = 1; k <= extra; ++k) {
      code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    }
    out.push_back(code);
    i += extra + 1;
  }
  return out;
}

std::string ToUtf16(const std::string& text, bool big_endian) {
  std::string out;
  const auto put = [&out, big_endian](std::uint32_t unit) {
    const char high = static_cast<char>((unit >> 8) & 0xFF);
    const char low = static_cast<char>(unit & 0xFF);
    out += big_endian ? high : low;
    out += big_endian ? low : high;
  };
  for (const std::uint32_t code : CodePoints(text)) {
    if (code >= 0x10000) {
      put(0xD800 + ((code - 0x10000) >> 10));
      put(0xDC00 + ((code - 0x10000) & 0x3FF));
    } else {
      put(code);
    }
  }
  return out;
}

}  // namespace

std::string DecodeText(const std::string& bytes) {
  if (bytes.rfind("\xEF\xBB\xBF", 0) == 0) return bytes.substr(3);
  if (bytes.rfind("\xFF\xFE", 0) == 0) return FromUtf16(bytes, 2, false);
  if (bytes.rfind("\xFE\xFF", 0) == 0) return FromUtf16(bytes, 2, true);
  return bytes;
}

std::optional<std::string> EncodeText(const std::string& text, const std::string& encoding,
                                      bool bom) {
  const std::string name = LowerAscii(encoding);
  if (name == "unicode") return (bom ? std::string("\xFF\xFE") : "") + ToUtf16(text, false);
  if (name == "bigendianunicode") return (bom ? std::string("\xFE\xFF") : "") + ToUtf16(text, true);
  if (name == "utf8") return (bom ? std::string("\xEF\xBB\xBF") : "") + text;
  if (name == "ascii") {
    std::string out;
    for (const std::uint32_t code : CodePoints(text))
      out += code < 0x80 ? static_cast<char>(code) : '?';
    return out;
  }
  // The ANSI and OEM code pages: the same bytes for ASCII, which is all these scripts write.
  if (name == "default" || name == "oem" || name == "string") return text;
  return std::nullopt;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') {
      lines.push_back(line);
      line.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace dxshim::test::node_standin::powershell
