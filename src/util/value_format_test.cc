#include "util/value_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vouch {
namespace {

TEST(FormatValue, NoExponentBetweenTheUsualMagnitudes) {
  EXPECT_EQ(FormatValue(12345678), "12,345,678");
  EXPECT_EQ(FormatValue(1.2e7), "12,000,000");
  EXPECT_EQ(FormatValue(-98765432.1), "-98,765,432");
  EXPECT_EQ(FormatValue(1234.56789), "1,234.57");
  EXPECT_EQ(FormatValue(131.4), "131.4");
  EXPECT_EQ(FormatValue(100), "100");
  EXPECT_EQ(FormatValue(0.5), "0.5");
  EXPECT_EQ(FormatValue(0.0000123456), "0.0000123456");
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(999999.7), "1,000,000");
  EXPECT_EQ(FormatValue(12345.67), "12,345.7");
  EXPECT_EQ(FormatValue(1e18), "1e+18");
  EXPECT_EQ(FormatValue(std::nan("")), "nan");
  for (double v : {3.3e7, 4.56e9, 7.1e-6, 2.5e12})
    EXPECT_EQ(FormatValue(v).find('e'), std::string::npos) << v;
}

TEST(FormatValue, BytesInBinaryUnitsAndUnitsAppended) {
  EXPECT_EQ(FormatValue(12582912, "bytes"), "12.0 MiB");
  EXPECT_EQ(FormatValueWithUnit(12582912, "B"), "12.0 MiB");
  EXPECT_EQ(FormatValueWithUnit(12345678, "tok/s"), "12,345,678 tok/s");
  EXPECT_EQ(FormatValueWithUnit(2.5, ""), "2.5");
}

}  // namespace
}  // namespace vouch
