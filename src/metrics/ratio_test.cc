#include "metrics/ratio.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

// The H200 case: B's median time was 1.107x A's. The printed ratio is B/A of the time and
// says B is slower; the same change in a rate reads the other way round.
TEST(Ratio, SaysWhichWayItReads) {
  EXPECT_EQ(RatioReading("B", "A", 1.107, Better::kLower, "ms"), "B/A time 1.1070 (B slower)");
  EXPECT_EQ(RatioReading("B", "A", 0.906, Better::kHigher, "tok/s"),
            "B/A throughput 0.9060 (B slower)");
  EXPECT_EQ(RatioReading("B", "A", 1.2, Better::kHigher, "tok/s"),
            "B/A throughput 1.2000 (B faster)");
  EXPECT_EQ(RatioReading("now", "baseline", 0.9, Better::kLower, "bytes"),
            "now/baseline value 0.9000 (now better)");
  EXPECT_EQ(RatioReading("now", "baseline", 1.0, Better::kLower, "ns"),
            "now/baseline time 1.0000 (equal)");
  EXPECT_EQ(RatioReading("B", "A", 2, Better::kNone, ""), "B/A value 2.0000");
  // Printed as 1.0000, it says neither faster nor slower; 1.0001 does.
  EXPECT_EQ(RatioReading("now", "baseline", 1.00004, Better::kHigher, "1/s"),
            "now/baseline throughput 1.0000 (equal)");
  EXPECT_EQ(RatioReading("now", "baseline", 0.99996, Better::kHigher, "1/s"),
            "now/baseline throughput 1.0000 (equal)");
  EXPECT_EQ(RatioReading("now", "baseline", 1.0001, Better::kHigher, "1/s"),
            "now/baseline throughput 1.0001 (now faster)");
  EXPECT_EQ(QuantityOf("items/s"), "throughput");
  EXPECT_EQ(QuantityOf("fraction"), "value");
}

}  // namespace
}  // namespace vouch
