#include "shim/install/edit/text_encoding.h"

namespace dxshim::install {
namespace {

std::uint32_t Unit(const std::string& bytes, std::size_t at) {
  return static_cast<unsigned char>(bytes[at]) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 8U;
}

}  // namespace

void AppendUtf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6U));
    out += static_cast<char>(0x80 | (code & 0x3FU));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12U));
    out += static_cast<char>(0x80 | ((code >> 6U) & 0x3FU));
    out += static_cast<char>(0x80 | (code & 0x3FU));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18U));
    out += static_cast<char>(0x80 | ((code >> 12U) & 0x3FU));
    out += static_cast<char>(0x80 | ((code >> 6U) & 0x3FU));
    out += static_cast<char>(0x80 | (code & 0x3FU));
  }
}

std::string TextOf(const std::string& bytes) {
  if (bytes.rfind("\xEF\xBB\xBF", 0) == 0) return bytes.substr(3);
  if (bytes.rfind("\xFF\xFE", 0) != 0) return bytes;
  std::string out;
  for (std::size_t i = 2; i + 1 < bytes.size(); i += 2) {
    std::uint32_t code = Unit(bytes, i);
    if (code >= 0xD800 && code < 0xDC00 && i + 3 < bytes.size()) {  // a surrogate pair
      code = 0x10000 + ((code - 0xD800) << 10U) + (Unit(bytes, i + 2) - 0xDC00);
      i += 2;
    }
    AppendUtf8(out, code);
  }
  return out;
}

}  // namespace dxshim::install
