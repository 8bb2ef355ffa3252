#include "stats/percentiles.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vouch {
namespace {

TEST(Percentiles, MinRequestsIsTheBinomialOrderStatisticBound) {
  // k = 1: 1 - q^n >= c, so n = ceil(ln(1 - c) / ln(q)).
  EXPECT_EQ(MinRequestsForPercentile(0.99, 0.99), 459u);
  EXPECT_EQ(MinRequestsForPercentile(0.99, 0.95), 299u);
  EXPECT_EQ(MinRequestsForPercentile(0.95, 0.99), 90u);
  EXPECT_EQ(MinRequestsForPercentile(0.90, 0.99), 44u);
  EXPECT_EQ(MinRequestsForPercentile(0.999, 0.99), 4603u);
  EXPECT_EQ(MinRequestsForPercentile(0.5, 0.99), 7u);
  // The low tail is symmetric: the fastest of 459 bounds the p1 from below.
  EXPECT_EQ(MinRequestsForPercentile(0.01, 0.99), 459u);
  // The second largest needs more: P(Bin(n, 0.01) >= 2) >= 0.99.
  std::size_t n2 = MinRequestsForPercentile(0.99, 0.99, 2);
  EXPECT_GT(n2, 459u);
  auto at_least_two = [](double n) {
    return 1 - std::pow(0.99, n) - n * 0.01 * std::pow(0.99, n - 1);
  };
  EXPECT_GE(at_least_two(static_cast<double>(n2)), 0.99);
  EXPECT_LT(at_least_two(static_cast<double>(n2 - 1)), 0.99);
  EXPECT_EQ(MinRequestsForPercentile(1.0, 0.99), 0u);
  EXPECT_EQ(MinRequestsForPercentile(0.99, 1.0), 0u);
}

TEST(Percentiles, NamesAsVllmWritesThem) {
  EXPECT_DOUBLE_EQ(*PercentileOfName("p99_ttft_ms"), 0.99);
  EXPECT_DOUBLE_EQ(*PercentileOfName("p99.9_e2el_ms"), 0.999);
  EXPECT_DOUBLE_EQ(*PercentileOfName("p50_itl_ms"), 0.5);
  EXPECT_FALSE(PercentileOfName("mean_ttft_ms"));
  EXPECT_FALSE(PercentileOfName("p_ttft_ms"));
  EXPECT_FALSE(PercentileOfName("p100_ttft_ms"));
  EXPECT_FALSE(PercentileOfName("p9.9.9_ttft_ms"));
  EXPECT_FALSE(PercentileOfName("peak"));
}

TEST(Percentiles, TheOrderStatisticThatBoundsAQuantile) {
  // 1,000 requests: P(Bin(1000, 0.01) >= 3) = 0.9973 >= 0.99, P(>= 4) = 0.9899 is not: the 3rd
  // largest (the 998th from the fastest) bounds the p99 at 99 %.
  EXPECT_EQ(UpperBoundOrder(1000, 0.99), 998u);
  EXPECT_EQ(UpperBoundOrder(459, 0.99), 459u);  // the slowest, just
  EXPECT_EQ(UpperBoundOrder(458, 0.99), 0u);    // none
  EXPECT_EQ(UpperBoundOrder(50, 0.99), 0u);
  EXPECT_EQ(UpperBoundOrder(7, 0.5), 7u);
  EXPECT_EQ(UpperBoundOrder(0, 0.5), 0u);
  // The slowest of 50 bounds the p91.2 at 99 %: 0.01^(1/50).
  EXPECT_NEAR(QuantileBoundedBySlowest(50), 0.9120108, 1e-6);
  EXPECT_EQ(QuantileBoundedBySlowest(0), 0);
  EXPECT_EQ(GroupedCount(1000), "1,000");
  EXPECT_EQ(GroupedCount(4603), "4,603");
  EXPECT_EQ(GroupedCount(999), "999");
  EXPECT_EQ(GroupedCount(1234567), "1,234,567");
}

Metric Serving(const std::string& name, double v) {
  return Metric{
      name, v,           name == "completed" ? "count" : "ms", Better::kLower, "vllm r.json",
      {},   std::nullopt};
}

TEST(Percentiles, AnUnsupportedPercentileIsRemovedWithItsBound) {
  std::vector<Metric> leg = {Serving("completed", 50),    Serving("p99_e2el_ms", 149.5),
                             Serving("max_e2el_ms", 150), Serving("p99_ttft_ms", 80),
                             Serving("p90_ttft_ms", 70),  Serving("median_ttft_ms", 40)};
  auto lines = RefuseUnsupportedPercentiles(&leg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "p99 of 50 completed requests is not a figure (p99_e2el_ms, p99_ttft_ms not quoted): "
            "a p99 at 99 % confidence needs at least 459 requests; the slowest of 50 bounds "
            "p91.2 at 99 % (and the p99 at only 39.5 %): e2el <= 150 ms");
  EXPECT_EQ(FindMetric(leg, "p99_e2el_ms"), nullptr);
  EXPECT_EQ(FindMetric(leg, "p99_ttft_ms"), nullptr);
  ASSERT_NE(FindMetric(leg, "p90_ttft_ms"), nullptr);  // 44 requests support a p90
  ASSERT_NE(FindMetric(leg, "median_ttft_ms"), nullptr);
  ASSERT_NE(FindMetric(leg, "max_e2el_ms"), nullptr);  // a fact, not a percentile
  ASSERT_NE(FindMetric(leg, "completed"), nullptr);
}

TEST(Percentiles, TheResultWithoutPerRequestTimesSaysHowToGetThem) {
  std::vector<Metric> leg = {Serving("completed", 50), Serving("p99_ttft_ms", 80)};
  auto lines = RefuseUnsupportedPercentiles(&leg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(": the result holds no per-request times (vllm bench serve "
                          "--save-detailed writes them)"),
            std::string::npos)
      << lines[0];
}

TEST(Percentiles, MinRequestsRefusesASupportedPercentileAndNamesItsBound) {
  std::vector<Metric> leg = {Serving("completed", 1000), Serving("p99_e2el_ms", 990.01)};
  std::vector<Metric> kept = leg;
  EXPECT_TRUE(RefuseUnsupportedPercentiles(&kept).empty());  // 1,000 >= 459
  EXPECT_EQ(kept.size(), 2u);
  auto lines = RefuseUnsupportedPercentiles(&leg, 2000);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "p99 of 1,000 completed requests is not a figure (p99_e2el_ms not quoted): fewer "
            "than --min-requests 2000; what 1,000 requests do support: the 3rd largest bounds "
            "the p99 at 99 %");
  EXPECT_EQ(leg.size(), 1u);
}

TEST(Percentiles, OtherSourcesAndLegsWithoutACountAreLeftAlone) {
  Metric done = Serving("completed", 5), p = Serving("p99_ttft_ms", 1);
  done.source = p.source = "channel:line 1";
  std::vector<Metric> chan = {done, p};
  EXPECT_TRUE(RefuseUnsupportedPercentiles(&chan).empty());
  EXPECT_EQ(chan.size(), 2u);
  std::vector<Metric> no_count = {Serving("p99_ttft_ms", 1)};
  EXPECT_TRUE(RefuseUnsupportedPercentiles(&no_count).empty());
  EXPECT_EQ(no_count.size(), 1u);
}

}  // namespace
}  // namespace vouch
