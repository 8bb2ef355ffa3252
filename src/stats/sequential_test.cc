#include "stats/sequential.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stats/ab_sim.h"

namespace vouch {
namespace {

TEST(Sequential, OneLookIsTheFixedSampleBoundary) {
  const std::vector<double> t = {1.0};
  const auto c = SpendingBoundaries(t, 0.05, SpendingFunction::kOBrienFleming);
  ASSERT_TRUE(c);
  EXPECT_NEAR((*c)[0], 1.959963984540054, 1e-9);
  EXPECT_NEAR(AlphaSpent(SpendingFunction::kPocock, 0.05, 1.0), 0.05, 1e-15);
  EXPECT_NEAR(AlphaSpent(SpendingFunction::kOBrienFleming, 0.05, 1.0), 0.05, 1e-15);
  EXPECT_EQ(AlphaSpent(SpendingFunction::kOBrienFleming, 0.05, 0.0), 0.0);
}

TEST(Sequential, LanDeMetsOBrienFlemingMatchesPublishedBoundaries) {
  // Five equally spaced looks, two-sided alpha 0.05, O'Brien-Fleming-type spending:
  // 4.8769 3.3569 2.6803 2.2898 2.0310 (Jennison & Turnbull 2000, table 7.6; R ldbounds).
  const std::vector<double> t = {0.2, 0.4, 0.6, 0.8, 1.0};
  const auto c = SpendingBoundaries(t, 0.05, SpendingFunction::kOBrienFleming);
  ASSERT_TRUE(c);
  const double expected[] = {4.8769, 3.3569, 2.6803, 2.2898, 2.0310};
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR((*c)[k], expected[k], 6e-4) << "look " << k + 1;
}

TEST(Sequential, PocockTypeBoundariesAreNearlyFlat) {
  const std::vector<double> t = {0.2, 0.4, 0.6, 0.8, 1.0};
  const auto c = SpendingBoundaries(t, 0.05, SpendingFunction::kPocock);
  ASSERT_TRUE(c);
  // Lan-DeMets Pocock-type, 5 looks, two-sided 0.05: 2.438 2.427 2.410 2.397 2.386.
  const double expected[] = {2.438, 2.427, 2.410, 2.397, 2.386};
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR((*c)[k], expected[k], 3e-3) << "look " << k + 1;
}

TEST(Sequential, RejectsBadPlans) {
  const std::vector<double> not_increasing = {0.5, 0.5};
  EXPECT_FALSE(SpendingBoundaries(not_increasing, 0.05, SpendingFunction::kPocock));
  const std::vector<double> beyond = {0.5, 1.5};
  EXPECT_FALSE(SpendingBoundaries(beyond, 0.05, SpendingFunction::kPocock));
  const std::vector<double> ok = {1.0};
  EXPECT_FALSE(SpendingBoundaries(ok, 0.0, SpendingFunction::kPocock));
  SequentialPlan plan;
  plan.first_look_pairs = 1;
  EXPECT_FALSE(MakeSequentialDesign(plan));
  plan = {};
  plan.max_pairs = 3;  // below the first look
  EXPECT_FALSE(MakeSequentialDesign(plan));
  plan = {};
  plan.pairs_per_look = 0;
  EXPECT_FALSE(MakeSequentialDesign(plan));
  plan = {};
  plan.max_pairs = 1'000'000'000;  // hostile: would be 5e8 looks
  EXPECT_FALSE(MakeSequentialDesign(plan));
  plan.max_pairs = 2 * kMaxSequentialLooks + 4;  // one look too many
  EXPECT_FALSE(MakeSequentialDesign(plan));
}

TEST(Sequential, DesignLooksAndLevels) {
  SequentialPlan plan;
  plan.spending = SpendingFunction::kOBrienFleming;
  plan.max_pairs = 11;  // the last look is at max_pairs even off the block grid
  const auto design = MakeSequentialDesign(plan);
  ASSERT_TRUE(design);
  const std::vector<std::size_t> looks = {4, 6, 8, 10, 11};
  EXPECT_EQ(design->look_pairs, looks);
  ASSERT_EQ(design->nominal_alpha.size(), 5u);
  double previous = 0;
  for (double a : design->nominal_alpha) {
    EXPECT_GT(a, previous);  // OBF: stricter early, nearer 0.05 late
    EXPECT_LT(a, 0.05);
    previous = a;
  }
  // The small-sample correction tightens (df 3 at the first look), by a bounded amount.
  EXPECT_LT(design->small_sample_scale, 1.0);
  EXPECT_GT(design->small_sample_scale, 0.7);
  plan.calibration_paths = 0;
  const auto plain = MakeSequentialDesign(plan);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->small_sample_scale, 1.0);
  EXPECT_EQ(plain->boundary_z, design->boundary_z);
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(plain->nominal_alpha[k], std::erfc(plain->boundary_z[k] / std::sqrt(2.0)), 1e-12);
    EXPECT_NEAR(design->nominal_alpha[k], design->small_sample_scale * plain->nominal_alpha[k],
                1e-15);
  }
}

TEST(Sequential, LookStopsOnAClearResultAndContinuesOtherwise) {
  const NoiseBand band = *NoiseBandFromPercent(1);
  const auto design = MakeSequentialDesign({});
  ASSERT_TRUE(design);
  // A strong, tight 10 % gain stops at the first look.
  const std::vector<double> clear = {0.095, 0.097, 0.096, 0.094};
  const auto s1 = SequentialLook(clear, 1, *design, band);
  ASSERT_TRUE(s1);
  EXPECT_TRUE(s1->stop);
  EXPECT_EQ(s1->decision.verdict, AbVerdict::kBFaster);
  EXPECT_LT(s1->nominal_confidence, 1.0);
  EXPECT_GT(s1->nominal_confidence, 0.95);
  // A noisy start continues.
  const std::vector<double> noisy = {0.03, -0.01, 0.02, 0.0};
  const auto s2 = SequentialLook(noisy, 1, *design, band);
  ASSERT_TRUE(s2);
  EXPECT_FALSE(s2->stop);
  EXPECT_EQ(s2->decision.verdict, AbVerdict::kInconclusive);
  // Too few pairs before the last look: continue, not a final refusal.
  const std::vector<double> two = {0.03, 0.02};
  const auto s3 = SequentialLook(two, 1, *design, band);
  EXPECT_FALSE(s3->stop);
  EXPECT_EQ(s3->decision.verdict, AbVerdict::kRefused);
  // The last look stops whatever it finds.
  std::vector<double> sixteen;
  for (int i = 0; i < 16; ++i) sixteen.push_back(i % 2 ? 0.03 : -0.02);
  const auto last = SequentialLook(sixteen, design->look_pairs.size(), *design, band);
  EXPECT_TRUE(last->stop);
  EXPECT_FALSE(SequentialLook(sixteen, 0, *design, band));
  EXPECT_FALSE(SequentialLook(sixteen, design->look_pairs.size() + 1, *design, band));
  // The convenience form builds the default plan.
  const auto conv = SequentialLook(clear, 1, 16, band);
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->decision.verdict, AbVerdict::kBFaster);
}

double SequentialFalsePositiveRate(const SequentialDesign& design, const NoiseBand& band,
                                   std::size_t experiments, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < experiments; ++i) {
    const AbVerdict v =
        SimulateSequential(design, {.effect_pct = 0, .leg_noise_sd_pct = 1}, band, rng).verdict;
    wrong += v == AbVerdict::kBFaster || v == AbVerdict::kBSlower;
  }
  return static_cast<double>(wrong) / static_cast<double>(experiments);
}

TEST(SequentialSimulation, FalsePositiveRateStaysNominalOverRepeatedLooks) {
  constexpr std::size_t kExperiments = 2000;
  const double margin = 3 * std::sqrt(0.05 * 0.95 / kExperiments);
  for (const SpendingFunction f : {SpendingFunction::kOBrienFleming, SpendingFunction::kPocock}) {
    // The hard case: no band and no majority rule, so only the corrected level protects.
    SequentialPlan plan;
    plan.max_pairs = 16;
    plan.spending = f;
    plan.options.majority_rule = false;
    const auto bare = MakeSequentialDesign(plan);
    ASSERT_TRUE(bare);
    const double fp_bare =
        SequentialFalsePositiveRate(*bare, *NoiseBandFromPercent(0), kExperiments, 7);
    EXPECT_LT(fp_bare, 0.05 + margin) << static_cast<int>(f);
    // And the uncorrected procedure (95 % at every look) does exceed it: the test can fail.
    SequentialDesign naive = *bare;
    for (double& a : naive.nominal_alpha) a = 0.05;
    const double fp_naive =
        SequentialFalsePositiveRate(naive, *NoiseBandFromPercent(0), kExperiments, 7);
    EXPECT_GT(fp_naive, 0.05 + margin) << static_cast<int>(f);
    // Shipped options with a 1 % band (same levels: the options do not enter them).
    SequentialDesign shipped = *bare;
    shipped.plan.options = {};
    EXPECT_LT(SequentialFalsePositiveRate(shipped, *NoiseBandFromPercent(1), kExperiments, 8),
              0.05 + margin);
  }
}

}  // namespace
}  // namespace vouch
