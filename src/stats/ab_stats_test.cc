#include "stats/ab_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "stats/ab_sim.h"
#include "util/fs.h"

namespace vouch {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// 1e-9 relative (the brief's tolerance for exact quantities), with an absolute floor for
// values that are zero up to rounding.
void ExpectClose(double actual, double expected, const std::string& what, double rel = 1e-9) {
  const double tol = std::max(rel * std::fabs(expected), 1e-15);
  EXPECT_NEAR(actual, expected, tol) << what;
}

nlohmann::json LoadReference() {
  const auto text = ReadFile(std::string(VOUCH_SOURCE_DIR) + "/tests/data/stats/reference.json");
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return nlohmann::json::parse(text.ok() ? *text : std::string("{}"));
}

TEST(AbStatsReference, PairedTMatchesScipy) {
  const nlohmann::json ref = LoadReference();
  ASSERT_GE(ref["vectors"].size(), 8u);
  for (const auto& [name, v] : ref["vectors"].items()) {
    const auto d = v["d"].get<std::vector<double>>();
    for (const auto& r : v["paired_t"]) {
      const double conf = r["confidence"];
      const auto t = PairedT(d, conf);
      ASSERT_TRUE(t.has_value()) << name;
      const std::string what = name + " @" + std::to_string(conf);
      ExpectClose(t->mean_log, r["mean"], what + " mean");
      ExpectClose(t->sd_log, r["sd"], what + " sd");
      ExpectClose(t->t_quantile, r["t_quantile"], what + " t");
      // lo and hi are differences of mean and half width and can cancel to near zero:
      // relative to the scale of the terms, not of the result.
      const double scale = std::fabs(t->mean_log) + t->half_width_log;
      EXPECT_NEAR(t->lo_log, r["lo"].get<double>(), 1e-9 * scale) << what << " lo";
      EXPECT_NEAR(t->hi_log, r["hi"].get<double>(), 1e-9 * scale) << what << " hi";
      // scipy's t survival function and Boost's agree to ~1e-12 relative, not better.
      ExpectClose(t->p_two_sided, r["p"], what + " p", 1e-7);
    }
  }
}

TEST(AbStatsReference, WilcoxonMatchesScipy) {
  const nlohmann::json ref = LoadReference();
  int exact_cases = 0;
  int approx_cases = 0;
  for (const auto& [name, v] : ref["vectors"].items()) {
    const auto d = v["d"].get<std::vector<double>>();
    const auto& r = v["wilcoxon"];
    const auto w = WilcoxonSignedRank(d);
    ASSERT_TRUE(w.has_value()) << name;
    EXPECT_EQ(w->n_used, r["n_used"].get<std::size_t>()) << name;
    EXPECT_EQ(w->n_zeros, r["n_zeros"].get<std::size_t>()) << name;
    EXPECT_EQ(w->has_ties, r["has_ties"].get<bool>()) << name;
    EXPECT_EQ(w->method == WilcoxonMethod::kExact ? "exact" : "approx",
              r["method"].get<std::string>())
        << name;
    ExpectClose(w->w_plus, r["w_plus"], name + " w+");
    ExpectClose(w->w_minus, r["w_minus"], name + " w-");
    ExpectClose(w->statistic, r["statistic"], name + " statistic");
    if (w->method == WilcoxonMethod::kExact) {
      ++exact_cases;
      ExpectClose(w->p_two_sided, r["p"], name + " exact p");
    } else {
      ++approx_cases;
      ExpectClose(w->p_two_sided, r["p"], name + " approx p", 1e-7);
    }
  }
  EXPECT_GE(exact_cases, 6);
  EXPECT_GE(approx_cases, 1);
}

TEST(AbStatsReference, SignTestAndPercentilesMatchScipy) {
  const nlohmann::json ref = LoadReference();
  for (const auto& c : ref["binomtest"]) {
    ExpectClose(BinomialHalfTwoSidedP(c["k"], c["n"]), c["p"],
                "binomtest " + c["k"].dump() + "/" + c["n"].dump());
  }
  for (const auto& [name, v] : ref["vectors"].items()) {
    const auto d = v["d"].get<std::vector<double>>();
    const SignCount s = CountSigns(d);
    EXPECT_EQ(s.favour_b, v["signs"]["favour_b"].get<std::size_t>()) << name;
    EXPECT_EQ(s.favour_a, v["signs"]["favour_a"].get<std::size_t>()) << name;
    EXPECT_EQ(s.ties, v["signs"]["ties"].get<std::size_t>()) << name;
    ExpectClose(s.p_two_sided, v["signs"]["p"], name + " sign p");
    std::vector<double> mags;
    for (double x : d) mags.push_back(std::fabs(x));
    for (const auto& q : v["abs_percentiles"]) {
      const auto p = Percentile(mags, q["q"]);
      ASSERT_TRUE(p.has_value());
      ExpectClose(*p, q["value"], name + " percentile " + q["q"].dump());
    }
  }
}

TEST(AbStats, LogRatioOrientation) {
  // Throughput 110 vs 100: B better by 10 %, d > 0.
  EXPECT_NEAR(*PairLogRatio(100, 110, MetricDirection::kHigherIsBetter), std::log(1.1), 1e-15);
  // Duration 100 ns vs 110 ns: B worse, d < 0.
  EXPECT_NEAR(*PairLogRatio(100, 110, MetricDirection::kLowerIsBetter), -std::log(1.1), 1e-15);
  EXPECT_FALSE(PairLogRatio(0, 1, MetricDirection::kHigherIsBetter));
  EXPECT_FALSE(PairLogRatio(1, -1, MetricDirection::kHigherIsBetter));
  EXPECT_FALSE(PairLogRatio(kNaN, 1, MetricDirection::kHigherIsBetter));
  EXPECT_FALSE(
      PairLogRatio(1, std::numeric_limits<double>::infinity(), MetricDirection::kHigherIsBetter));
}

TEST(AbStats, ClockNormalisationRemovesAClockOnlyDifference) {
  // B ran at a 10 % lower clock and its GPU-bound time is 10 % longer: same cycles.
  const double t_a = 1000;
  const double t_b = 1000 * 2000.0 / 1800.0;
  const auto d = PairLogRatio(t_a, t_b, MetricDirection::kLowerIsBetter);
  const auto dn = ClockNormalisedLogRatio(t_a, t_b, 2000, 1800, MetricDirection::kLowerIsBetter);
  EXPECT_LT(*d, -0.1);
  EXPECT_NEAR(*dn, 0.0, 1e-12);
  // Throughput 5 % higher with a 5 % higher clock: per cycle the same. The brief's formula.
  const auto tn = ClockNormalisedLogRatio(100, 105, 2000, 2100, MetricDirection::kHigherIsBetter);
  EXPECT_NEAR(*tn, std::log((105.0 / 2100) / (100.0 / 2000)), 1e-15);
  EXPECT_NEAR(*tn, 0.0, 1e-12);
  EXPECT_FALSE(ClockNormalisedLogRatio(100, 105, 0, 2100, MetricDirection::kHigherIsBetter));
  EXPECT_FALSE(ClockNormalisedLogRatio(100, 105, 2000, kNaN, MetricDirection::kHigherIsBetter));
}

TEST(AbStats, WilcoxonExactDistributionSmallCases) {
  // n = 1: W+ is 0 or 1 with probability 1/2 each; two-sided p = 1.
  EXPECT_DOUBLE_EQ(*WilcoxonExactTwoSidedP(1, 1), 1.0);
  // n = 5, all positive (W+ = 15): P(W <= 0) = 1/32, two-sided 1/16.
  EXPECT_DOUBLE_EQ(*WilcoxonExactTwoSidedP(5, 15), 0.0625);
  EXPECT_DOUBLE_EQ(*WilcoxonExactTwoSidedP(6, 21), 0.03125);
  // n = 4, W+ = 1: subsets of {1..4} with sum <= 1 are {} and {1}: 2/16, two-sided 0.25.
  EXPECT_DOUBLE_EQ(*WilcoxonExactTwoSidedP(4, 1), 0.25);
  EXPECT_FALSE(WilcoxonExactTwoSidedP(0, 0));
  EXPECT_FALSE(WilcoxonExactTwoSidedP(kWilcoxonExactMaxN + 1, 10));
  EXPECT_FALSE(WilcoxonExactTwoSidedP(4, 11));  // above n(n+1)/2
  const std::vector<double> zeros = {0.0, 0.0};
  EXPECT_FALSE(WilcoxonSignedRank(zeros));
  const std::vector<double> bad = {0.01, kNaN};
  EXPECT_FALSE(WilcoxonSignedRank(bad));
}

TEST(AbStats, WilcoxonLargeNUsesNormalApproximationAboveExactLimit) {
  std::vector<double> d;
  for (std::size_t i = 0; i < kWilcoxonExactMaxN + 10; ++i) {
    d.push_back((i % 3 == 0 ? -1.0 : 1.0) * (1e-4 * static_cast<double>(i + 1)));
  }
  const auto w = WilcoxonSignedRank(d);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->method, WilcoxonMethod::kNormalTieCorrected);
  EXPECT_LT(w->p_two_sided, 1e-3);
}

TEST(AbStats, PairedTRejectsTooFewAndBadInput) {
  const std::vector<double> one = {0.01};
  EXPECT_FALSE(PairedT(one));
  const std::vector<double> with_nan = {0.01, kNaN, 0.02};
  EXPECT_FALSE(PairedT(with_nan));
  const std::vector<double> ok = {0.01, 0.02};
  EXPECT_FALSE(PairedT(ok, 1.0));
  EXPECT_FALSE(PairedT(ok, 0.0));
  const auto t = PairedT(ok);
  ASSERT_TRUE(t);
  // df 1: t = 12.706; mean 0.015, sd 0.00707, se 0.005.
  EXPECT_NEAR(t->t_quantile, 12.706204736174698, 1e-9);
  EXPECT_NEAR(t->Ratio(), std::exp(0.015), 1e-15);
  EXPECT_NEAR(t->RatioLo(), std::exp(0.015 - 12.706204736174698 * 0.005), 1e-9);
}

TEST(AbStats, NoiseBand) {
  const auto given = NoiseBandFromPercent(1.0);
  ASSERT_TRUE(given);
  EXPECT_NEAR(given->half_width_log, std::log(1.01), 1e-15);
  EXPECT_NEAR(given->Percent(), 1.0, 1e-12);
  EXPECT_EQ(given->source, NoiseBand::Source::kGiven);
  EXPECT_FALSE(NoiseBandFromPercent(-1));
  EXPECT_FALSE(NoiseBandFromPercent(kNaN));
  // |d| = 1..10 (x 0.001): the 95th percentile interpolates 0.95 of the way from 9 to 10.
  std::vector<double> aa;
  for (int i = 1; i <= 10; ++i) aa.push_back((i % 2 ? -1 : 1) * 0.001 * i);
  const auto cal = NoiseBandFromCalibration(aa);
  ASSERT_TRUE(cal);
  EXPECT_NEAR(cal->half_width_log, 0.00955, 1e-15);
  EXPECT_EQ(cal->source, NoiseBand::Source::kCalibrated);
  EXPECT_EQ(cal->calibration_pairs, 10u);
  EXPECT_EQ(cal->percentile, 95.0);
  const std::vector<double> three = {0.01, 0.02, 0.03};
  EXPECT_FALSE(NoiseBandFromCalibration(three));
  EXPECT_FALSE(Percentile(three, 101));
  EXPECT_FALSE(Percentile(std::vector<double>{}, 50));
}

TEST(AbStats, ClassifyIntervalFollowsSpec) {
  const double b = 0.01;
  EXPECT_EQ(ClassifyInterval(0.011, 0.05, b), AbVerdict::kBFaster);
  EXPECT_EQ(ClassifyInterval(-0.05, -0.011, b), AbVerdict::kBSlower);
  EXPECT_EQ(ClassifyInterval(-0.009, 0.009, b), AbVerdict::kNoChange);
  EXPECT_EQ(ClassifyInterval(-0.01, 0.01, b), AbVerdict::kNoChange);      // edges are inside
  EXPECT_EQ(ClassifyInterval(0.005, 0.02, b), AbVerdict::kInconclusive);  // straddles edge
  EXPECT_EQ(ClassifyInterval(-0.02, 0.02, b), AbVerdict::kInconclusive);  // wider than band
  EXPECT_EQ(ClassifyInterval(0.001, 0.002, 0.0), AbVerdict::kBFaster);    // no band
  EXPECT_EQ(ToString(AbVerdict::kBFaster), "B faster");
  EXPECT_EQ(ToString(AbVerdict::kBSlower), "B slower");
  EXPECT_EQ(ToString(AbVerdict::kNoChange), "no change");
  EXPECT_EQ(ToString(AbVerdict::kInconclusive), "inconclusive");
  EXPECT_EQ(ToString(AbVerdict::kRefused), "refused");
}

TEST(AbStats, DecideRefusesWithEveryReason) {
  const auto band = *NoiseBandFromPercent(1);
  const std::vector<double> d = {0.05, 0.06, 0.055};
  const std::vector<std::string> why = {"pair 3: SM clock spread 6.1% > 5%",
                                        "pair 4: window idle (12 busy samples < 30)"};
  const AbDecision r = DecideAb(d, band, {}, why);
  EXPECT_EQ(r.verdict, AbVerdict::kRefused);
  ASSERT_EQ(r.reasons.size(), 3u);
  EXPECT_EQ(r.reasons[0], why[0]);
  EXPECT_EQ(r.reasons[1], why[1]);
  EXPECT_EQ(r.reasons[2],
            "only 3 valid pairs remain, at least 4 are needed: run more pairs or fix the excluded "
            "ones");
  EXPECT_EQ(r.valid_pairs, 3u);
  // Non-finite d is excluded by index, and the reasons still travel with a verdict.
  const std::vector<double> d2 = {0.05, kNaN, 0.06, 0.055, 0.052, 0.058};
  const AbDecision r2 = DecideAb(d2, band, {}, why);
  EXPECT_EQ(r2.verdict, AbVerdict::kBFaster);
  EXPECT_EQ(r2.valid_pairs, 5u);
  ASSERT_EQ(r2.reasons.size(), 3u);
  EXPECT_EQ(r2.reasons[2], "pair 1: log ratio is not finite, excluded");
  const AbDecision empty = DecideAb({}, band);
  EXPECT_EQ(empty.verdict, AbVerdict::kRefused);
  EXPECT_EQ(empty.reasons.back(),
            "only 0 valid pairs remain, at least 4 are needed: run more pairs or fix the excluded "
            "ones");
}

TEST(AbStats, DecideRefusesABadBandOrConfidence) {
  const std::vector<double> d = {0.05, 0.06, 0.055, 0.052};
  NoiseBand bad;
  bad.half_width_log = -0.01;
  const AbDecision r = DecideAb(d, bad);
  EXPECT_EQ(r.verdict, AbVerdict::kRefused);
  EXPECT_EQ(r.reasons.back(),
            "noise band half width -0.01 (log) and confidence 0.95 must be finite, >= 0 and in "
            "(0, 1): calibrate the band or give it in percent");
  bad.half_width_log = kNaN;
  EXPECT_EQ(DecideAb(d, bad).verdict, AbVerdict::kRefused);
  AbOptions o;
  o.confidence = 1.5;
  EXPECT_EQ(DecideAb(d, *NoiseBandFromPercent(1), o).verdict, AbVerdict::kRefused);
}

TEST(AbStats, HugeInputStaysFast) {
  // 200000 pairs: the Wilcoxon switches to the normal approximation, nothing is quadratic.
  std::mt19937_64 rng(3);
  const std::vector<double> d =
      SimulateLogRatios(200000, {.effect_pct = 0.1, .leg_noise_sd_pct = 1}, rng);
  const AbDecision r = DecideAb(d, *NoiseBandFromPercent(0.5));
  EXPECT_EQ(r.verdict, AbVerdict::kNoChange);
  ASSERT_TRUE(r.wilcoxon);
  EXPECT_EQ(r.wilcoxon->method, WilcoxonMethod::kNormalTieCorrected);
  EXPECT_LT(r.wilcoxon->p_two_sided, 1e-6);  // 0.1 % is real at this n, yet inside the band
  EXPECT_EQ(r.signs.favour_a + r.signs.favour_b + r.signs.ties, 200000u);
}

TEST(AbStats, DecideVerdicts) {
  const auto band = *NoiseBandFromPercent(1);
  const std::vector<double> faster = {0.031, 0.027, 0.035, 0.029, 0.024, 0.033};
  EXPECT_EQ(DecideAb(faster, band).verdict, AbVerdict::kBFaster);
  std::vector<double> slower;
  for (double v : faster) slower.push_back(-v);
  EXPECT_EQ(DecideAb(slower, band).verdict, AbVerdict::kBSlower);
  const std::vector<double> same = {0.001, -0.001, 0.0005, -0.0007, 0.0002, 0.0, 0.0008, -0.0004};
  EXPECT_EQ(DecideAb(same, band).verdict, AbVerdict::kNoChange);
  const std::vector<double> unsure = {0.02, -0.01, 0.03, 0.0, 0.015, -0.005};
  const AbDecision u = DecideAb(unsure, band);
  EXPECT_EQ(u.verdict, AbVerdict::kInconclusive);
  ASSERT_TRUE(u.further_pairs);
  EXPECT_EQ(*u.further_pairs % 2, 0u);  // whole ABBA blocks
  EXPECT_GT(*u.further_pairs, 0u);
}

TEST(AbStats, MajorityRuleBlocksAnOutlierDrivenVerdict) {
  // Without a band: five pairs lean slightly to A, three strongly to B. The mean and its
  // interval sit above zero, but a majority of pairs favour A.
  const auto band = *NoiseBandFromPercent(0);
  const std::vector<double> d = {0.050, 0.052, 0.049, -0.001, -0.002, -0.001, -0.002, -0.001};
  AbOptions no_rule;
  no_rule.majority_rule = false;
  no_rule.confidence = 0.80;
  EXPECT_EQ(DecideAb(d, band, no_rule).verdict, AbVerdict::kBFaster);
  AbOptions rule = no_rule;
  rule.majority_rule = true;
  const AbDecision r = DecideAb(d, band, rule);
  EXPECT_EQ(r.verdict, AbVerdict::kInconclusive);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0],
            "majority rule: the interval lies above the band but only 3 of 8 pairs favour B");
}

TEST(AbStats, FurtherPairsFormula) {
  // mean 0.02, sd 0.015, n 6, band 0.01: delta 0.01, t(5) = 2.5706, z(0.8) = 0.8416,
  // n* = ceil((3.4122 * 1.5)^2) = ceil(26.197) = 27, further 21 -> 22 (whole blocks).
  const auto f = FurtherPairsEstimate(0.02, 0.015, 6, 0.01, 0.95, 0.8, 2);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, 22u);
  // Mean inside the band: the distance to the edge is what must be resolved.
  EXPECT_EQ(*FurtherPairsEstimate(0.0, 0.015, 6, 0.01, 0.95, 0.8, 1), 21u);
  EXPECT_FALSE(FurtherPairsEstimate(0.01, 0.015, 6, 0.01, 0.95, 0.8, 2));  // on the edge
  EXPECT_FALSE(FurtherPairsEstimate(0.02, 0.0, 6, 0.01, 0.95, 0.8, 2));
  EXPECT_FALSE(FurtherPairsEstimate(0.02, 0.01, 1, 0.01, 0.95, 0.8, 2));
}

TEST(AbStats, CompareArmsReportsWhatTheClockExplains) {
  // B is 6 % faster in time but ran at a 6 % higher clock: per cycle the same.
  std::vector<AbPair> pairs;
  const double jitter[] = {0.001, -0.002, 0.0015, -0.001, 0.0005, -0.0005, 0.002, -0.0015};
  for (double j : jitter) {
    pairs.push_back({.a = 1000 * (1 + j),
                     .b = 1000 / 1.06 * (1 - j),
                     .clock_a_mhz = 2000,
                     .clock_b_mhz = 2120});
  }
  pairs.push_back({.a = -1, .b = 1000, .clock_a_mhz = 2000, .clock_b_mhz = 2000});
  const auto band = *NoiseBandFromPercent(1);
  const AbComparison c = CompareArms(pairs, MetricDirection::kLowerIsBetter, band);
  EXPECT_EQ(c.plain.verdict, AbVerdict::kBFaster);
  EXPECT_EQ(c.clock_normalised.verdict, AbVerdict::kNoChange);
  ASSERT_TRUE(c.clock_explained_log);
  EXPECT_NEAR(*c.clock_explained_log, std::log(1.06), 1e-12);
  EXPECT_EQ(c.plain.valid_pairs, 8u);
  ASSERT_EQ(c.plain.reasons.size(), 1u);
  EXPECT_EQ(c.plain.reasons[0],
            "pair 8: metric A=-1 B=1000 is not a positive finite number, excluded");
}

// --- Simulated error rates (seeded; deterministic with one standard library) ------------

struct Rates {
  double faster = 0;
  double slower = 0;
  double no_change = 0;
};

Rates RunFixed(std::size_t experiments, std::size_t pairs, const AbSimulation& sim,
               const NoiseBand& band, const AbOptions& options, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Rates r;
  for (std::size_t i = 0; i < experiments; ++i) {
    const AbVerdict v = SimulateFixed(pairs, sim, band, options, rng).verdict;
    r.faster += v == AbVerdict::kBFaster;
    r.slower += v == AbVerdict::kBSlower;
    r.no_change += v == AbVerdict::kNoChange;
  }
  const auto e = static_cast<double>(experiments);
  return {r.faster / e, r.slower / e, r.no_change / e};
}

// Binomial 3-sigma margin on a rate p measured over `experiments` runs.
double Margin(double p, std::size_t experiments) {
  return 3 * std::sqrt(p * (1 - p) / static_cast<double>(experiments));
}

TEST(AbStatsSimulation, AAFalsePositiveRateWithinNominal) {
  constexpr std::size_t kExperiments = 2000;
  const AbSimulation aa{.effect_pct = 0, .leg_noise_sd_pct = 1.0};
  // With no band and no majority rule the t interval alone decides: the rate of a
  // directional claim must be the nominal 5 %, within 3 sigma on either side (a
  // miscalibrated interval fails this both ways).
  AbOptions bare;
  bare.majority_rule = false;
  const Rates zero_band = RunFixed(kExperiments, 10, aa, *NoiseBandFromPercent(0), bare, 1);
  const double fp0 = zero_band.faster + zero_band.slower;
  EXPECT_LT(fp0, 0.05 + Margin(0.05, kExperiments));
  EXPECT_GT(fp0, 0.05 - Margin(0.05, kExperiments));
  // The shipped rule (1 % band, majority rule): never more than nominal.
  const Rates banded = RunFixed(kExperiments, 10, aa, *NoiseBandFromPercent(1), {}, 2);
  EXPECT_LT(banded.faster + banded.slower, 0.05 + Margin(0.05, kExperiments));
  // Per direction the nominal rate is alpha/2.
  EXPECT_LT(banded.faster, 0.025 + Margin(0.025, kExperiments));
  EXPECT_LT(banded.slower, 0.025 + Margin(0.025, kExperiments));
}

TEST(AbStatsSimulation, PlantedEffectsFoundInTheRightDirection) {
  constexpr std::size_t kExperiments = 1000;
  const NoiseBand band = *NoiseBandFromPercent(1);
  // 10 pairs, leg noise 1 % (sd of d 1.41 %), band 1 %. Normal theory for "interval above
  // the band": 2 % -> ~0.45, 5 % -> ~1, 10 % -> 1. Assert well inside those, and that the
  // wrong direction never appears.
  struct Case {
    double effect_pct;
    double min_power;
  };
  for (const Case c : {Case{2, 0.30}, Case{5, 0.99}, Case{10, 0.999}}) {
    const Rates r = RunFixed(kExperiments, 10, {.effect_pct = c.effect_pct, .leg_noise_sd_pct = 1},
                             band, {}, 100 + static_cast<std::uint64_t>(c.effect_pct));
    EXPECT_GE(r.faster, c.min_power) << c.effect_pct << " %";
    EXPECT_EQ(r.slower, 0.0) << c.effect_pct << " %";
    EXPECT_EQ(r.no_change, 0.0) << c.effect_pct << " %";
    // The same slowdown is found as "B slower".
    const Rates s =
        RunFixed(kExperiments, 10,
                 {.effect_pct = 100 / (1 + c.effect_pct / 100) - 100, .leg_noise_sd_pct = 1}, band,
                 {}, 200 + static_cast<std::uint64_t>(c.effect_pct));
    EXPECT_GE(s.slower, c.min_power) << c.effect_pct << " %";
    EXPECT_EQ(s.faster, 0.0) << c.effect_pct << " %";
  }
}

// The smallest effect a verdict could see is the band plus the interval's half width; the
// pairs for the band are the TOST sample size at no effect, in whole blocks, never fewer than
// the pairs already run.
TEST(AbStats, MdeAndPairsForEquivalence) {
  const std::vector<double> d = {0.008, -0.012, 0.02, -0.016, 0.004, -0.004};
  auto band = NoiseBandFromPercent(1);
  ASSERT_TRUE(band);
  AbDecision dec = DecideAb(d, *band);
  ASSERT_TRUE(dec.interval);
  EXPECT_EQ(dec.verdict, AbVerdict::kInconclusive);
  EXPECT_NEAR(*MinimumDetectableEffectPct(dec),
              100 * std::expm1(std::log1p(0.01) + dec.interval->half_width_log), 1e-12);
  auto pairs = PairsForEquivalence(dec, 0.95, 0.8, 2);
  ASSERT_TRUE(pairs);
  const double t = 2.570581835636314;   // scipy t.ppf(0.975, 5)
  const double z = 1.2815515655446004;  // scipy norm.ppf(0.9)
  const double n = std::ceil(std::pow((t + z) * dec.interval->sd_log / std::log1p(0.01), 2));
  EXPECT_EQ(*pairs, static_cast<std::size_t>(std::ceil(n / 2) * 2));
  EXPECT_GT(*pairs, d.size());
  // No band, no equivalence to reach; no interval, no MDE.
  EXPECT_FALSE(PairsForEquivalence(DecideAb(d, *NoiseBandFromPercent(0)), 0.95, 0.8, 2));
  EXPECT_FALSE(MinimumDetectableEffectPct(AbDecision{}));
}

}  // namespace
}  // namespace vouch
