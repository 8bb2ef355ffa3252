#include "stats/rank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace vouch {
namespace {

TEST(Rank, SeparationPIsTwoOverTheBinomial) {
  EXPECT_DOUBLE_EQ(SeparationP(6, 6), 2.0 / 924);  // C(12, 6) = 924
  EXPECT_DOUBLE_EQ(SeparationP(4, 4), 2.0 / 70);
  EXPECT_DOUBLE_EQ(SeparationP(2, 2), 2.0 / 6);
  EXPECT_DOUBLE_EQ(SeparationP(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(SeparationP(0, 5), 1.0);
  // Far past where C(m + n, m) overflows a double: still finite, and tiny.
  EXPECT_GE(SeparationP(600, 600), 0.0);
  EXPECT_LT(SeparationP(600, 600), 1e-300);
}

TEST(Rank, TheExactPMatchesEnumeration) {
  // All orderings of 3 x's and 3 y's: 20; y wholly above or below in 2 of them.
  int separated = 0, all = 0;
  for (int mask = 0; mask < 64; ++mask) {
    if (__builtin_popcount(mask) != 3) continue;
    ++all;
    std::vector<double> x, y;
    for (int i = 0; i < 6; ++i) (mask >> i & 1 ? x : y).push_back(i + 1.0);
    separated += CompleteSeparation(x, y).has_value();
  }
  EXPECT_EQ(all, 20);
  EXPECT_EQ(separated, 2);
  EXPECT_DOUBLE_EQ(SeparationP(3, 3), 2.0 / 20);
  EXPECT_EQ(separated * 10, all);  // 2 of 20
}

TEST(Rank, DirectionGapAndRefusals) {
  std::vector<double> a = {100, 101, 99, 100.5}, b = {90, 91, 89.5};
  auto s = CompleteSeparation(a, b);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->direction, -1);
  EXPECT_NEAR(s->gap_log, std::log(99 / 91.0), 1e-12);
  EXPECT_DOUBLE_EQ(s->p_two_sided, 2.0 / 35);
  auto up = CompleteSeparation(b, a);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->direction, +1);
  // A touch (a tie across the sides) or an overlap is no separation.
  std::vector<double> touch = {91, 95};
  EXPECT_FALSE(CompleteSeparation(b, touch));
  std::vector<double> overlap = {90.5, 95};
  EXPECT_FALSE(CompleteSeparation(b, overlap));
  std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_FALSE(CompleteSeparation(a, nan));
  EXPECT_FALSE(CompleteSeparation(a, std::vector<double>{}));
}

}  // namespace
}  // namespace vouch
