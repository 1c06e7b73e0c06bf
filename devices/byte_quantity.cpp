#include "devices/byte_quantity.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace dxshim::devices {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Larger than any text's length, so an exponent clamped to it gives the same answer: a value of
// 10^(2^40) overflows and one of 10^-(2^40) rounds up to one byte either way.
constexpr std::int64_t kExponentClamp = std::int64_t{1} << 40;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A suffix's factor: 10^decimal * 2^binary.
struct Scale {
  std::int64_t decimal = 0;
  unsigned binary = 0;
};

// The suffixes of suffix.go's newSuffixer ("" included).
std::optional<Scale> UnitSuffix(std::string_view suffix) {
  static constexpr std::array<std::pair<std::string_view, Scale>, 16> kSuffixes = {{
      {"", {0, 0}},
      {"n", {-9, 0}},
      {"u", {-6, 0}},
      {"m", {-3, 0}},
      {"k", {3, 0}},
      {"M", {6, 0}},
      {"G", {9, 0}},
      {"T", {12, 0}},
      {"P", {15, 0}},
      {"E", {18, 0}},
      {"Ki", {0, 10}},
      {"Mi", {0, 20}},
      {"Gi", {0, 30}},
      {"Ti", {0, 40}},
      {"Pi", {0, 50}},
      {"Ei", {0, 60}},
  }};
  for (const auto& [name, scale] : kSuffixes) {
    if (suffix == name) return scale;
  }
  return std::nullopt;
}

// "e9", "E+9", "e-3": the exponent (clamped), or nullopt when `suffix` is none or its integer does
// not fit 64 bits signed (suffixHandler.interpret parses it with strconv.ParseInt(.., 10, 64)).
std::optional<std::int64_t> ExponentSuffix(std::string_view suffix) {
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
  std::string_view digits = suffix.substr(1);
  const bool negative = digits[0] == '-';
  if (digits[0] == '-' || digits[0] == '+') digits.remove_prefix(1);
  if (digits.empty() || !IsDigit(digits[0])) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  const auto limit = std::uint64_t{1} << 63;  // |int64 min|; int64 max is one less
  if (magnitude > (negative ? limit : limit - 1)) return std::nullopt;
  const auto clamped = static_cast<std::int64_t>(
      magnitude > static_cast<std::uint64_t>(kExponentClamp) ? kExponentClamp : magnitude);
  return negative ? -clamped : clamped;
}

// a * b, or nullopt past 64 bits.
std::optional<std::uint64_t> Multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > kMax / a) return std::nullopt;
  return a * b;
}

// a + b, or nullopt past 64 bits.
std::optional<std::uint64_t> Add(std::uint64_t a, std::uint64_t b) {
  if (b > kMax - a) return std::nullopt;
  return a + b;
}

// ceil(digits * 10^exponent * 2^binary), exactly; `digits` has neither leading nor trailing zeros
// (so it is not zero). nullopt past 64 bits.
std::optional<std::uint64_t> Bytes(std::string_view digits, std::int64_t exponent,
                                   unsigned binary) {
  const std::uint64_t factor = std::uint64_t{1} << binary;
  const auto count = static_cast<std::int64_t>(digits.size());
  // The digits before the decimal point, then those after it.
  const auto whole_count = exponent >= 0 ? count : (-exponent < count ? count + exponent : 0);
  const auto whole_digits = digits.substr(0, static_cast<std::size_t>(whole_count));
  const auto fraction_digits = digits.substr(static_cast<std::size_t>(whole_count));
  std::optional<std::uint64_t> whole = 0;
  for (const char c : whole_digits) {
    whole = Multiply(*whole, 10);
    if (whole) whole = Add(*whole, static_cast<std::uint64_t>(c - '0'));
    if (!whole) return std::nullopt;
  }
  // A non-zero whole (digits has no leading zero) overflows within 20 tens.
  for (std::int64_t i = 0; i < exponent; ++i) {
    whole = Multiply(*whole, 10);
    if (!whole) return std::nullopt;
  }
  whole = Multiply(*whole, factor);
  if (!whole) return std::nullopt;
  if (fraction_digits.empty()) return whole;
  // The fraction 0.f1f2..fk times `factor`, by Horner's rule from the last digit:
  // a(i) = (fi * factor + a(i+1)) / 10. floor(a(i)) is what integer division of
  // fi * factor + floor(a(i+1)) by 10 gives, and a(i) is whole only when every remainder up to it
  // was 0. a(i) < factor <= 2^60, so fi * factor + a(i+1) < 10 * 2^60 fits 64 bits.
  std::uint64_t part = 0;
  bool inexact = false;
  for (auto it = fraction_digits.rbegin(); it != fraction_digits.rend(); ++it) {
    const auto n = static_cast<std::uint64_t>(*it - '0') * factor + part;
    inexact = inexact || n % 10 != 0;
    part = n / 10;
  }
  // Zeros between the decimal point and the digits ("0.0005"): once part is 0 more change nothing.
  const auto zeros = exponent < 0 && -exponent > count ? -exponent - count : 0;
  for (std::int64_t i = 0; i < zeros && part != 0; ++i) {
    inexact = inexact || part % 10 != 0;
    part /= 10;
  }
  return Add(*whole, part + (inexact ? 1 : 0));
}

}  // namespace

ByteQuantity ReadByteQuantity(std::string_view text) {
  ByteQuantity out;
  out.problem = ByteQuantity::Problem::kNotAQuantity;
  std::size_t pos = 0;
  const auto digits_from = [&](std::size_t from) {
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    return text.substr(from, pos - from);
  };
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  const auto whole = digits_from(pos);
  std::string_view fraction;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    fraction = digits_from(pos);
  }
  if (whole.empty() && fraction.empty()) return out;
  const auto suffix = text.substr(pos);
  Scale scale;
  if (const auto unit = UnitSuffix(suffix)) {
    scale = *unit;
  } else if (const auto exponent = ExponentSuffix(suffix)) {
    scale.decimal = *exponent;
  } else {
    return out;
  }
  out.plain = suffix.empty();
  // The significant digits and the power of ten that scales them: "0012.3400Ki" is 1234 * 10^-2
  // * 2^10.
  std::string digits(whole);
  digits.append(fraction);
  auto exponent = scale.decimal - static_cast<std::int64_t>(fraction.size());
  const auto first = digits.find_first_not_of('0');
  out.problem = ByteQuantity::Problem::kNone;
  if (first == std::string::npos) return out;  // zero, whatever its sign or scale
  const auto last = digits.find_last_not_of('0');
  exponent += static_cast<std::int64_t>(digits.size() - 1 - last);
  digits = digits.substr(first, last + 1 - first);
  if (negative) {
    out.problem = ByteQuantity::Problem::kNegative;
    return out;
  }
  const auto bytes = Bytes(digits, exponent, scale.binary);
  if (!bytes) {
    out.problem = ByteQuantity::Problem::kTooLarge;
    return out;
  }
  out.bytes = *bytes;
  return out;
}

std::uint64_t ParseByteQuantity(const std::string& text) {
  const auto q = ReadByteQuantity(text);
  switch (q.problem) {
    case ByteQuantity::Problem::kNone:
      return q.bytes;
    case ByteQuantity::Problem::kNegative:
      throw std::invalid_argument("'" + text + "' is negative");
    case ByteQuantity::Problem::kTooLarge:
      throw std::invalid_argument("'" + text + "' is too large (more than 64 bits of bytes)");
    case ByteQuantity::Problem::kNotAQuantity:
      break;
  }
  throw std::invalid_argument("'" + text +
                              "' is not a quantity of bytes such as 16Gi, 512Mi, 1.5Gi or "
                              "1073741824");
}

}  // namespace dxshim::devices
