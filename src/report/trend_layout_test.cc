#include "report/trend_layout.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

using Rows = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(TrendPageLayout, ASeriesAScreenCanShowIsDrawnAndListedWhole) {
  auto l = LayOutTrendPage(150, {});
  EXPECT_EQ(l.bucket, 1u);
  EXPECT_EQ(l.rows, (Rows{{0, 150}}));
  EXPECT_TRUE(LayOutTrendPage(0, {}).rows.empty());
}

// 100,000 points: 2,000 drawn buckets of 50; the table lists the 6 points around each step and
// the last 100 (a step near the end merges with them), not 100,000 rows.
TEST(TrendPageLayout, ALongSeriesIsBucketedAndListedAroundItsSteps) {
  Step a, b, c;
  a.index = 60000;
  b.index = 2;
  c.index = 99950;
  auto l = LayOutTrendPage(100000, {a, b, c});
  EXPECT_EQ(l.bucket, 50u);
  EXPECT_EQ(l.rows, (Rows{{0, 5}, {59997, 60003}, {99900, 100000}}));
  std::size_t listed = 0;
  for (const auto& [from, to] : l.rows) listed += to - from;
  EXPECT_EQ(listed, 111u);
  EXPECT_EQ(LayOutTrendPage(2001, {}).bucket, 2u);
  EXPECT_EQ(LayOutTrendPage(2000, {}).bucket, 1u);
}

}  // namespace
}  // namespace vouch
