// Byte quantities (devices/byte_quantity.h): Kubernetes' quantity grammar (sign, fraction,
// exponent, every binary and decimal suffix), a fraction of a byte rounded up to whole bytes as
// Kubernetes' Quantity.Value() rounds, and what is not a quantity, negative or more than 64 bits
// refused, each with its own problem.
#include "devices/byte_quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dxshim::devices {
namespace {

using Problem = ByteQuantity::Problem;

constexpr std::uint64_t kKi = 1ull << 10;
constexpr std::uint64_t kMi = 1ull << 20;
constexpr std::uint64_t kGi = 1ull << 30;
constexpr std::uint64_t kMax = ~0ull;

struct Valid {
  const char* text;
  std::uint64_t bytes;
  bool plain;
};

TEST(ByteQuantity, KubernetesGrammar) {
  const Valid table[] = {
      // Plain numbers of bytes.
      {"0", 0, true},
      {"1073741824", kGi, true},
      {"+1073741824", kGi, true},
      {"007", 7, true},
      {"18446744073709551615", kMax, true},
      // Every binary suffix.
      {"1Ki", kKi, false},
      {"512Mi", 512 * kMi, false},
      {"16Gi", 16 * kGi, false},
      {"2Ti", 2ull << 40, false},
      {"3Pi", 3ull << 50, false},
      {"15Ei", 15ull << 60, false},
      // Every decimal suffix; below one, a fraction of a byte, rounded up.
      {"1n", 1, false},
      {"1u", 1, false},
      {"1m", 1, false},
      {"1000m", 1, false},
      {"1001m", 2, false},
      {"5000000000n", 5, false},
      {"1k", 1000, false},
      {"8M", 8000000, false},
      {"8G", 8000000000ull, false},
      {"2T", 2000000000000ull, false},
      {"3P", 3000000000000000ull, false},
      {"18E", 18000000000000000000ull, false},
      // Fractions, with any number of digits, an empty whole or an empty fraction.
      {"1.5Gi", 1536 * kMi, false},
      {"0.5Gi", 512 * kMi, false},
      {".5Gi", 512 * kMi, false},
      {"0.5G", 500000000, false},
      {"+1.5Gi", 1536 * kMi, false},
      {"1.Gi", kGi, false},
      {"1.", 1, true},
      {"100.035Ki", 102436, false},  // 102435.84 bytes
      {"1.0000001Mi", kMi + 1, false},
      {"1.0000000001Gi", kGi + 1, false},
      {"0.000000000001Ki", 1, false},
      {"0012.3400Ki", 12637, false},  // 12636.16 bytes
      {"0.1", 1, true},
      {"1.5", 2, true},
      {"0.000000000000000000000000000001", 1, true},
      // Exponents: 'e' or 'E', a signed integer, no other suffix.
      {"6e9", 6000000000ull, false},
      {"6E9", 6000000000ull, false},
      {"6e+9", 6000000000ull, false},
      {"1.5e3", 1500, false},
      {"5e-1", 1, false},
      {"15e-1", 2, false},
      {"6e09", 6000000000ull, false},
      {"1e-99999999999", 1, false},
      {"0e99999999999", 0, false},
      // Zero, whatever its sign or unit.
      {"-0", 0, true},
      {"0Gi", 0, false},
      {"-0.0Ei", 0, false},
      {"0.0", 0, true},
      // The largest of each kind.
      {"16777215.999999999999Ti", kMax, false},
      {"18.446744073709551615E", kMax, false},
      {"18446744073709551615e0", kMax, false},
      {"184467440737095516150000000000e-10", kMax, false},
  };
  for (const auto& [text, bytes, plain] : table) {
    const auto q = ReadByteQuantity(text);
    EXPECT_EQ(q.problem, Problem::kNone) << text;
    EXPECT_EQ(q.bytes, bytes) << text;
    EXPECT_EQ(q.plain, plain) << text;
    EXPECT_EQ(ParseByteQuantity(text), bytes) << text;
  }
}

TEST(ByteQuantity, WhatIsNotAQuantityNegativeOrTooLarge) {
  const std::pair<const char*, Problem> table[] = {
      {"", Problem::kNotAQuantity},
      {"lots", Problem::kNotAQuantity},
      {"Gi",
       Problem::kNotAQuantity},  // Kubernetes' scanner reads it as 0; its grammar wants digits
      {".", Problem::kNotAQuantity},
      {"+", Problem::kNotAQuantity},
      {"-", Problem::kNotAQuantity},
      {"+-1", Problem::kNotAQuantity},
      {"16GB", Problem::kNotAQuantity},
      {"16gi", Problem::kNotAQuantity},
      {"16K", Problem::kNotAQuantity},
      {"1i", Problem::kNotAQuantity},
      {"0.1mi", Problem::kNotAQuantity},
      {"1.1.M", Problem::kNotAQuantity},
      {"1+1.0M", Problem::kNotAQuantity},
      {"1e3Mi", Problem::kNotAQuantity},  // an exponent takes no suffix
      {"1e", Problem::kNotAQuantity},
      {"1e+", Problem::kNotAQuantity},
      {"-3.01e-", Problem::kNotAQuantity},
      {"1e1.5", Problem::kNotAQuantity},
      {"1e99999999999999999999", Problem::kNotAQuantity},  // not a 64-bit exponent
      {" 1Gi", Problem::kNotAQuantity},
      {"1Gi ", Problem::kNotAQuantity},
      {"6 Gi", Problem::kNotAQuantity},
      {"1,5Gi", Problem::kNotAQuantity},
      {"0x10", Problem::kNotAQuantity},
      {"-1", Problem::kNegative},
      {"-2Gi", Problem::kNegative},
      {"-.5Mi", Problem::kNegative},
      {"-1n", Problem::kNegative},
      {"-6e9", Problem::kNegative},
      {"-20Ei", Problem::kNegative},
      {"18446744073709551616", Problem::kTooLarge},
      {"16777216Ti", Problem::kTooLarge},
      {"16384Pi", Problem::kTooLarge},
      {"16Ei", Problem::kTooLarge},
      {"20Ei", Problem::kTooLarge},
      {"19E", Problem::kTooLarge},
      {"16777215.9999999999999Ti", Problem::kTooLarge},  // rounds up past 2^64-1
      {"99999999999Ti", Problem::kTooLarge},
      {"1e20", Problem::kTooLarge},
      {"1e4294967296", Problem::kTooLarge},  // Kubernetes truncates the exponent to 32 bits
      {"184467440737095516160000000000e-10", Problem::kTooLarge},
  };
  for (const auto& [text, problem] : table) {
    const auto q = ReadByteQuantity(text);
    EXPECT_EQ(q.problem, problem) << text;
    EXPECT_EQ(q.bytes, 0u) << text;
    EXPECT_THROW(ParseByteQuantity(text), std::invalid_argument) << text;
  }
}

TEST(ByteQuantity, ErrorsNameTheTextAndTheProblem) {
  const auto error = [](const std::string& text) {
    try {
      ParseByteQuantity(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("16GB"),
            "'16GB' is not a quantity of bytes such as 16Gi, 512Mi, 1.5Gi or 1073741824");
  EXPECT_EQ(error("-2Gi"), "'-2Gi' is negative");
  EXPECT_EQ(error("20Ei"), "'20Ei' is too large (more than 64 bits of bytes)");
}

}  // namespace
}  // namespace dxshim::devices
