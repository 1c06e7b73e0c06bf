#include "devices/byte_quantity.h"

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace dxshim::devices {

std::uint64_t ParseByteQuantity(const std::string& text) {
  std::uint64_t number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  const std::string bad = "'" + text + "' is not a byte quantity such as 16Gi, 512Mi or 1073741824";
  if (ec != std::errc() || ptr == text.data()) throw std::invalid_argument(bad);
  // A decimal fraction, as Kubernetes quantities allow (1.5Gi): up to 9 digits.
  std::uint64_t fraction = 0;
  std::uint64_t scale = 1;
  if (ptr != end && *ptr == '.') {
    ++ptr;
    for (; ptr != end && *ptr >= '0' && *ptr <= '9'; ++ptr) {
      if (scale == 1000000000ull) throw std::invalid_argument(bad);
      fraction = fraction * 10 + static_cast<std::uint64_t>(*ptr - '0');
      scale *= 10;
    }
    if (scale == 1) throw std::invalid_argument(bad);
  }
  const std::string suffix(ptr, end);
  static const std::pair<const char*, std::uint64_t> kUnits[] = {
      {"", 1},
      {"Ki", 1ull << 10},
      {"Mi", 1ull << 20},
      {"Gi", 1ull << 30},
      {"Ti", 1ull << 40},
      {"k", 1000ull},
      {"M", 1000000ull},
      {"G", 1000000000ull},
      {"T", 1000000000000ull},
  };
  for (const auto& [unit, factor] : kUnits) {
    if (suffix != unit) continue;
    if (number > UINT64_MAX / factor) throw std::invalid_argument("'" + text + "' is too large");
    // The fraction's bytes, rounded up as Kubernetes rounds a quantity to whole bytes.
    const auto whole = factor / scale;
    const auto part = fraction * whole + (fraction * (factor % scale) + scale - 1) / scale;
    if (number * factor > UINT64_MAX - part)
      throw std::invalid_argument("'" + text + "' is too large");
    return number * factor + part;
  }
  throw std::invalid_argument(bad);
}

}  // namespace dxshim::devices
