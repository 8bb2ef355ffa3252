#include "metrics/summary.h"

#include <gtest/gtest.h>

#include <limits>

namespace vouch {
namespace {

TEST(Summary, OddAndEvenCounts) {
  auto s = Summarize("tg128.tokens_per_s", "tok/s", Better::kHigher, {120, 100, 110});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "tg128.tokens_per_s");
  EXPECT_EQ(s->unit, "tok/s");
  EXPECT_EQ(s->better, Better::kHigher);
  EXPECT_EQ(s->n, 3u);
  EXPECT_EQ(s->median, 110);
  EXPECT_EQ(s->min, 100);
  EXPECT_EQ(s->max, 120);
  EXPECT_EQ(s->mean, 110);
  ASSERT_TRUE(s->spread_pct);
  EXPECT_NEAR(*s->spread_pct, 20.0 / 110.0 * 100.0, 1e-12);
  auto e = Summarize("x", "s", Better::kLower, {4, 1, 3, 2});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->median, 2.5);
  EXPECT_NEAR(*e->spread_pct, 120.0, 1e-12);
}

TEST(Summary, EmptyNonFiniteAndZeroMedian) {
  EXPECT_FALSE(Summarize("x", "", Better::kNone, {}));
  EXPECT_FALSE(Summarize("x", "", Better::kNone, {1, std::numeric_limits<double>::quiet_NaN()}));
  EXPECT_FALSE(Summarize("x", "", Better::kNone, {std::numeric_limits<double>::infinity()}));
  auto z = Summarize("x", "", Better::kNone, {-1, 0, 1});
  ASSERT_TRUE(z);
  EXPECT_EQ(z->median, 0);
  EXPECT_FALSE(z->spread_pct);  // no relative spread around zero
  auto one = Summarize("x", "", Better::kNone, {5});
  ASSERT_TRUE(one);
  EXPECT_EQ(*one->spread_pct, 0);
}

TEST(Summary, OverLegsSkipsTextAndKeepsOrder) {
  std::vector<std::vector<Metric>> legs = {
      {Metric{"b", 2, "ms", Better::kLower, "", {}, std::nullopt},
       Metric{"sha", 0, "", Better::kNone, "", {}, std::string("abc")}},
      {Metric{"a", 7, "", Better::kNone, "", {}, std::nullopt},
       Metric{"b", 4, "ms", Better::kLower, "", {}, std::nullopt}},
  };
  auto s = SummarizeLegs(legs);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "b");
  EXPECT_EQ(s[0].n, 2u);
  EXPECT_EQ(s[0].median, 3);
  EXPECT_EQ(s[0].unit, "ms");
  EXPECT_EQ(s[1].name, "a");
  EXPECT_EQ(s[1].n, 1u);
}

}  // namespace
}  // namespace vouch
