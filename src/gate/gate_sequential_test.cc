#include "gate/gate_sequential.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "gate/gate_sim.h"
#include "stats/welch.h"

namespace vouch {
namespace {

TEST(GateSequential, DesignLooksAndLevels) {
  GateSequentialPlan plan;
  plan.baseline_trials = 8;
  plan.first_legs = 3;
  plan.legs_per_look = 3;
  plan.max_legs = 12;
  auto d = MakeGateSequentialDesign(plan);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->look_legs, (std::vector<std::size_t>{3, 6, 9, 12}));
  ASSERT_EQ(d->nominal_alpha.size(), 4u);
  // O'Brien-Fleming-type (the gate's): little spent early, the last look near 5 %.
  for (std::size_t k = 1; k < 4; ++k) EXPECT_GT(d->nominal_alpha[k], d->nominal_alpha[k - 1]);
  EXPECT_LT(d->nominal_alpha[0], 0.005);
  EXPECT_GT(d->nominal_alpha[3], 0.02);
  EXPECT_LT(d->nominal_alpha[3], 0.05);
  EXPECT_LE(d->small_sample_scale, 1.0);
  // Pocock-type: every look spends a fair share, less than the fixed design's 5 % each.
  plan.spending = SpendingFunction::kPocock;
  auto pocock = MakeGateSequentialDesign(plan);
  ASSERT_TRUE(pocock);
  double sum = 0;
  for (double a : pocock->nominal_alpha) {
    EXPECT_GT(a, 0.005);
    EXPECT_LT(a, 0.05);
    sum += a;
  }
  EXPECT_GT(sum, 0.05);  // the looks are correlated: their levels add to more than alpha
  EXPECT_GT(pocock->nominal_alpha[0], d->nominal_alpha[0]);
  plan.spending = SpendingFunction::kOBrienFleming;
  EXPECT_EQ(GateLookAt(*d, 2), 0u);
  EXPECT_EQ(GateLookAt(*d, 3), 1u);
  EXPECT_EQ(GateLookAt(*d, 7), 2u);
  EXPECT_EQ(GateLookAt(*d, 12), 4u);
  // The last look need not be a whole block.
  plan.max_legs = 10;
  EXPECT_EQ(MakeGateSequentialDesign(plan)->look_legs, (std::vector<std::size_t>{3, 6, 9, 10}));
  // Refused plans.
  plan.first_legs = 1;
  EXPECT_FALSE(MakeGateSequentialDesign(plan));
  plan.first_legs = 3;
  plan.baseline_trials = 1;
  EXPECT_FALSE(MakeGateSequentialDesign(plan));
  plan.baseline_trials = 5;
  plan.alpha = 0.5;
  EXPECT_FALSE(MakeGateSequentialDesign(plan));
  plan.alpha = 0.05;
  plan.level_paths = 999;  // too few null paths to find a fixed baseline's levels on
  EXPECT_FALSE(MakeGateSequentialDesign(plan));
}

TEST(GateSequential, BaselineGrowsToResolveItsThresholdOnce) {
  BaselineInput in{"tps", "tok/s", Better::kHigher, {100, 103, 97}, {}};
  auto b = MakeBaseline({in}, "tps", ClockState{}, {});
  ASSERT_TRUE(b);
  // sd 3 % against a 3 % threshold: many trials would resolve it; capped at max_trials.
  EXPECT_EQ(BaselineTrialsToResolve(*b, 8), 8u);
  const auto need = TrialsToResolve(*SdOfLogs(b->metrics[0].trials), 3, 0.05);
  ASSERT_TRUE(need);
  EXPECT_EQ(BaselineTrialsToResolve(*b, 1000), static_cast<std::size_t>(*need));
  // Quiet trials: no growth; never fewer than it has.
  in.values = {100, 100.1, 99.9};
  EXPECT_EQ(BaselineTrialsToResolve(*MakeBaseline({in}, "tps", ClockState{}, {}), 20), 3u);
  EXPECT_EQ(BaselineTrialsToResolve(*b, 2), 3u);
}

// Seeded simulated gates of known truth, through the real decision functions. A change of
// exactly the threshold is the worst case of the false-fail guarantee: the sequential looks
// on a baseline grown by its Stein step (spread from the first stage) keep it at 5 %. This
// test holds it to 5 % plus three binomial standard errors (1500 gates: 0.56 points each);
// with the pooled spread of the grown baseline (before the fix) it measured 6.0 % in 4000
// bench gates, and on this seed the same test then failed.
TEST(GateSequential, FalseFailAtTheThresholdStaysAtFivePercent) {
  GateSimulator sim(2301);
  GateSimSetup s;
  s.noise_sd_pct = 2;
  s.change_pct = 3;
  s.trials = 5;
  s.max_trials = 20;
  s.max_reps = 12;
  int fail = 0, grown = 0;
  const int n = 1500;
  for (int i = 0; i < n; ++i) {
    auto o = sim.Run(s);
    fail += o.verdict == GateVerdict::kFail;
    grown += o.trials > 5;
  }
  EXPECT_GT(grown, n / 2);  // the growth step is what is under test
  EXPECT_LE(fail, static_cast<int>(n * (0.05 + 3 * std::sqrt(0.05 * 0.95 / n))));
}

// The targets: unchanged code at 2 % noise is rarely inconclusive and never (almost)
// fails; a +8 % regression at 1 % noise is caught.
TEST(GateSequential, UnchangedDecidedAndRegressionCaught) {
  GateSimulator sim(2302);
  GateSimSetup s;
  s.noise_sd_pct = 2;
  s.max_trials = 20;
  s.max_reps = 12;
  int inconclusive = 0, fail = 0;
  double legs = 0, legs2 = 0;
  const int n = 500;
  for (int i = 0; i < n; ++i) {
    auto o = sim.Run(s);
    inconclusive += o.verdict == GateVerdict::kInconclusive;
    fail += o.verdict == GateVerdict::kFail;
    const auto l = static_cast<double>(o.trials + o.legs);
    legs += l;
    legs2 += l * l;
  }
  EXPECT_LE(inconclusive, n * 0.10 + 3 * std::sqrt(n * 0.1 * 0.9));
  EXPECT_LE(fail, n * 0.05);
  // At most 2.1x today's fixed design (5 trials and 3 legs) on average, within three standard
  // errors of this sample's mean. The bench's 20,000 gates: 16.35 legs (higher is better) and
  // 16.48 (lower), up from 15.96 when the levels were calibrated on the standard normal alone:
  // the growth rule's calibration (lambda 0.80, gate_sequential.h) is what the 5 % at the
  // threshold costs, and issue 34's 2x is missed by that much (docs/BENCHMARKS.md).
  const double mean = legs / n, sd = std::sqrt(std::max(0.0, legs2 / n - mean * mean));
  EXPECT_LE(mean, 2.1 * (5 + 3) + 3 * sd / std::sqrt(n)) << "sd " << sd;
  EXPECT_GT(mean, 5 + 3);  // the sequential design does run more legs
  s.noise_sd_pct = 1;
  s.change_pct = 8;
  int caught = 0;
  for (int i = 0; i < 300; ++i) caught += sim.Run(s).verdict == GateVerdict::kFail;
  EXPECT_GE(caught, 297);
}

// A baseline that could not grow: the looks' levels are found on the Welch statistic itself,
// look by look (gate_sequential.cc, GateLevelsByLook). On fresh seeded null paths (another seed
// than the calibration's) the share whose one-sided Welch p value falls under its look's level
// at any look is at most alpha, within three binomial standard errors; and --look-every spaces
// the looks after the first.
TEST(GateSequential, FixedBaselineLevelsHoldAlphaOnFreshPaths) {
  BaselineInput in{"tps", "tok/s", Better::kHigher, {}, {}};
  for (int i = 0; i < 8; ++i) in.values.push_back(1000 + i);
  auto b = MakeBaseline({in}, "tps", ClockState{}, {});
  ASSERT_TRUE(b);
  auto d = GateDesignFor(*b, 4, 15, 3, 0.05);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->look_legs, (std::vector<std::size_t>{4, 7, 10, 13, 15}));
  EXPECT_EQ(GateDesignFor(*b, 4, 15, 0, 0.05)->look_legs, (std::vector<std::size_t>{4, 8, 12, 15}));
  for (std::size_t k = 1; k < d->nominal_alpha.size(); ++k)
    EXPECT_GT(d->nominal_alpha[k], d->nominal_alpha[k - 1]);  // O'Brien-Fleming: little early
  EXPECT_LT(d->nominal_alpha.back(), 0.05);
  std::mt19937_64 rng(99);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int paths = 40000;
  int crossed = 0;
  for (int i = 0; i < paths; ++i) {
    double bs = 0, bss = 0;
    for (int j = 0; j < 8; ++j) {
      const double x = normal(rng);
      bs += x;
      bss += x * x;
    }
    const double mb = bs / 8, vb = (bss - 8 * mb * mb) / 7;
    double s = 0, ss = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < d->look_legs.size(); ++k) {
      for (; n < d->look_legs[k]; ++n) {
        const double x = normal(rng);
        s += x;
        ss += x * x;
      }
      const double nn = static_cast<double>(n), mn = s / nn, vn = (ss - nn * mn * mn) / (nn - 1);
      if (WelchUpperP(Welch({mb, vb, 8, 7}, {mn, vn, nn, nn - 1})) <= d->nominal_alpha[k]) {
        ++crossed;
        break;
      }
    }
  }
  // Held 0.15 points under alpha (4.85 %: gate_sequential.cc, kHoldShare).
  EXPECT_LE(crossed, paths * 0.0485 + 3 * std::sqrt(paths * 0.0485 * 0.9515));
  EXPECT_GT(crossed, paths * 0.04);  // and not far below it: the levels spend what they may
}

// Issue 34 item 4's design: a baseline of 8 trials (no growth), a gate of --reps 4
// --look-every 3 --max-reps 15. Unchanged code at 2 % noise is inconclusive at most 8 % in at
// most 16 runs in all (the bench's 200,000 gates: docs/BENCHMARKS.md), and at exactly the 3 %
// threshold it fails at most 5 %; each within three standard errors of these seeded gates.
TEST(GateSequential, FixedBaselineDesignMeetsTheThresholdTargets) {
  GateSimulator sim(3404);
  GateSimSetup s;
  s.noise_sd_pct = 2;
  s.trials = 8;
  s.reps = 4;
  s.look_every = 3;
  s.max_reps = 15;
  int inconclusive = 0, fail = 0;
  double legs = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    auto o = sim.Run(s);
    inconclusive += o.verdict == GateVerdict::kInconclusive;
    fail += o.verdict == GateVerdict::kFail;
    legs += static_cast<double>(o.trials + o.legs);
  }
  EXPECT_LE(inconclusive, n * 0.08 + 3 * std::sqrt(n * 0.08 * 0.92));
  EXPECT_EQ(fail, 0);
  EXPECT_LE(legs / n, 16.3);  // the sample's sd of runs in all is about 3: 3 SE is 0.3
  s.change_pct = 3;
  fail = 0;
  const int m = 1500;
  for (int i = 0; i < m; ++i) fail += sim.Run(s).verdict == GateVerdict::kFail;
  EXPECT_LE(fail, m * 0.05 + 3 * std::sqrt(m * 0.05 * 0.95));
}

}  // namespace
}  // namespace vouch
