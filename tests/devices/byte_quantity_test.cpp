// Byte quantities (devices/byte_quantity.h): Kubernetes' binary and decimal suffixes, a fraction
// rounded up to whole bytes, and what is not a quantity or does not fit in 64 bits refused.
#include "devices/byte_quantity.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dxshim::devices {
namespace {

TEST(ByteQuantity, SuffixesAndFractions) {
  EXPECT_EQ(ParseByteQuantity("16Gi"), 16ull << 30);
  EXPECT_EQ(ParseByteQuantity("512Mi"), 512ull << 20);
  EXPECT_EQ(ParseByteQuantity("8G"), 8000000000ull);
  EXPECT_EQ(ParseByteQuantity("1073741824"), 1073741824ull);
  EXPECT_EQ(ParseByteQuantity("1.5Gi"), 1536ull << 20);
}

TEST(ByteQuantity, Refusals) {
  EXPECT_THROW(ParseByteQuantity("lots"), std::invalid_argument);
  EXPECT_THROW(ParseByteQuantity("16GB"), std::invalid_argument);
  EXPECT_THROW(ParseByteQuantity("99999999999Ti"), std::invalid_argument);
}

}  // namespace
}  // namespace dxshim::devices
