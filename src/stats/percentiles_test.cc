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

Metric Vllm(const std::string& name, double v) {
  return Metric{
      name, v,           name == "completed" ? "count" : "ms", Better::kNone, "vllm r.json",
      {},   std::nullopt};
}

TEST(Percentiles, WarnsWithTheCountNeededAndTheFloor) {
  std::vector<std::vector<Metric>> legs = {{Vllm("completed", 50), Vllm("p99_ttft_ms", 80),
                                            Vllm("p50_ttft_ms", 40), Vllm("p99_e2el_ms", 900)},
                                           {Vllm("completed", 500), Vllm("p99_ttft_ms", 81),
                                            Vllm("p50_ttft_ms", 41), Vllm("p99_e2el_ms", 901)}};
  auto w = ServingPercentileWarnings(legs, {1, 2}, 100);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("p99 (p99_ttft_ms, p99_e2el_ms) from 50 completed requests is not a p99"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[0].find("needs at least 459 requests"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("leg 1 completed fewer requests than --min-requests 100 (fewest: 50)"),
            std::string::npos)
      << w[1];
  // Enough requests: nothing. Not a vllm source: nothing.
  EXPECT_TRUE(ServingPercentileWarnings({legs[1]}, {2}).empty());
  Metric chan = Vllm("completed", 5);
  chan.source = "channel:line 1";
  Metric p = Vllm("p99_ttft_ms", 1);
  p.source = "channel:line 2";
  EXPECT_TRUE(ServingPercentileWarnings({{chan, p}}, {1}).empty());
}

}  // namespace
}  // namespace vouch
