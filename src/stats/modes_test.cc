#include "stats/modes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace vouch {
namespace {

// The share of SIMS seeded samples of N values for which DetectModes finds modes.
template <class Draw>
double FoundRate(int n, int sims, std::uint64_t seed, Draw draw) {
  std::mt19937_64 rng(seed);
  int found = 0;
  std::vector<double> v(static_cast<size_t>(n));
  for (int s = 0; s < sims; ++s) {
    for (auto& x : v) x = draw(rng);
    found += DetectModes(v).found ? 1 : 0;
  }
  return static_cast<double>(found) / sims;
}

TEST(Modes, FalseAlarmRateOnUnimodalLegsIsAtMostOnePercent) {
  // Fresh seeds (the calibration used 1000 n + shape).
  for (int n : {6, 9, 20, 60}) {
    SCOPED_TRACE(n);
    std::normal_distribution<double> z(0, 1);
    double lognormal =
        FoundRate(n, 4000, 77 + n, [&](std::mt19937_64& r) { return 30 * std::exp(0.3 * z(r)); });
    double normal5 =
        FoundRate(n, 4000, 99 + n, [&](std::mt19937_64& r) { return 30 * (1 + 0.05 * z(r)); });
    double normal20 = FoundRate(n, 4000, 131 + n, [&](std::mt19937_64& r) {
      return std::max(1e-3, 30 * (1 + 0.2 * z(r)));
    });
    EXPECT_LE(lognormal, 0.01);
    EXPECT_LE(normal5, 0.01);
    EXPECT_LE(normal20, 0.01);
  }
}

// 33 vs 26 tok/s, 2 % noise inside each mode, each leg's mode a fair coin.
double BimodalRate(int n, std::uint64_t seed) {
  std::normal_distribution<double> z(0, 0.02);
  std::bernoulli_distribution coin(0.5);
  return FoundRate(n, 2000, seed,
                   [&](std::mt19937_64& r) { return (coin(r) ? 33.0 : 26.0) * (1 + z(r)); });
}

TEST(Modes, FindsSpawnModesAtSixNineAndTwentyLegs) {
  // A cluster needs two legs: 50/64 = 78 % of 6-leg samples have them, 492/512 = 96 % of 9.
  // At 6 legs the threshold (10.2 within-mode deviations) leaves about 59 % at 2 % noise.
  EXPECT_GE(BimodalRate(6, 5), 0.55);
  EXPECT_GE(BimodalRate(9, 6), 0.92);
  EXPECT_GE(BimodalRate(20, 7), 0.99);
}

TEST(Modes, FiveLegsAgainstFourAreTwoModesAndSaySo) {
  std::vector<double> v = {33.0, 26.1, 33.3, 25.9, 33.1, 26.0, 32.9, 33.2, 26.0};
  ModesResult r = DetectModes(v);
  ASSERT_TRUE(r.found);
  ASSERT_EQ(r.modes.size(), 2u);
  EXPECT_EQ(r.modes[0].legs, 5u);
  EXPECT_EQ(r.modes[1].legs, 4u);
  EXPECT_GT(r.statistic, r.threshold);
  EXPECT_EQ(DescribeModes(r, "tok/s"), "two modes: 33.1 tok/s in 5 legs, 26.0 in 4");
  // Fixed counts at 6 legs (4 + 2, 3 + 3, 2 + 4) with 1 % noise: found.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0, 0.01);
  for (int high : {2, 3, 4}) {
    int found = 0;
    for (int s = 0; s < 500; ++s) {
      std::vector<double> w;
      for (int i = 0; i < 6; ++i) w.push_back((i < high ? 33.0 : 26.0) * (1 + z(rng)));
      found += DetectModes(w).found ? 1 : 0;
    }
    EXPECT_GE(found, 490) << high;
  }
}

TEST(Modes, OneOutlierFewLegsAndEqualValuesAreNotModes) {
  EXPECT_FALSE(DetectModes(std::vector<double>{33, 33.1, 32.9, 33.2, 33.0, 20}).found);
  EXPECT_FALSE(DetectModes(std::vector<double>{33, 26, 33}).found);
  EXPECT_FALSE(DetectModes(std::vector<double>{5, 5, 5, 5, 5, 5}).found);
  EXPECT_EQ(ModesStatistic(std::vector<double>{5, 5, 5, 5}), 0);
  EXPECT_TRUE(std::isinf(ModesThreshold(3)));
  // Byte-identical values in two groups: no spread inside, modes.
  EXPECT_TRUE(DetectModes(std::vector<double>{100, 100, 100, 104, 104, 104}).found);
  // Clean but closer than the separation floor: not reported.
  EXPECT_FALSE(DetectModes(std::vector<double>{100, 100, 100, 100.5, 100.5, 100.5}).found);
  // Non-positive values are taken as they are (no log).
  EXPECT_TRUE(DetectModes(std::vector<double>{-10, -10.1, -9.9, 10, 10.1, 9.9}).found);
  EXPECT_EQ(DescribeModes(ModesResult{}, "ms"), "");
}

}  // namespace
}  // namespace vouch
