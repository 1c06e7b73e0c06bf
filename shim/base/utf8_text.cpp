#include "shim/base/utf8_text.h"

namespace dxshim {
namespace {

// The length of the well-formed sequence at `text[at]`, or 0 when none begins there. The ranges
// of Unicode's table 3-7: the second byte's range depends on the first (which rules out the
// overlong forms, the surrogates and what lies above U+10FFFF), every further byte is 80..BF.
std::size_t SequenceAt(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char first = byte(0);
  if (first < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (first >= 0xc2 && first <= 0xdf) {
    length = 2;
  } else if (first >= 0xe0 && first <= 0xef) {
    length = 3;
    if (first == 0xe0) low = 0xa0;   // below: overlong
    if (first == 0xed) high = 0x9f;  // above: U+D800..U+DFFF, surrogates
  } else if (first >= 0xf0 && first <= 0xf4) {
    length = 4;
    if (first == 0xf0) low = 0x90;   // below: overlong
    if (first == 0xf4) high = 0x8f;  // above: beyond U+10FFFF
  } else {
    return 0;  // 80..C1 (a continuation byte, or an overlong two-byte form), F5..FF
  }
  if (text.size() - at < length) return 0;  // cut short
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

std::string HexByte(unsigned char c) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  return {kDigits[c >> 4], kDigits[c & 0xf]};
}

}  // namespace

std::size_t InvalidUtf8Offset(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const auto length = SequenceAt(text, at);
    if (length == 0) return at;
    at += length;
  }
  return std::string_view::npos;
}

bool IsValidUtf8(std::string_view text) {
  return InvalidUtf8Offset(text) == std::string_view::npos;
}

std::string EscapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto length = SequenceAt(text, at);
    if (length == 0) {
      out += "\\x" + HexByte(static_cast<unsigned char>(text[at]));
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::optional<std::string> Utf8Problem(std::string_view text) {
  const auto at = InvalidUtf8Offset(text);
  if (at == std::string_view::npos) return std::nullopt;
  return "is not valid UTF-8 (byte 0x" + HexByte(static_cast<unsigned char>(text[at])) +
         " at offset " + std::to_string(at) + " of '" + EscapeInvalidUtf8(text) + "')";
}

}  // namespace dxshim
