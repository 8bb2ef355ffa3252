// The sequential gate (issue 23 item 1: `gate --max-reps N`) and the baseline's growth
// (`baseline --max-trials N`).
//
// Gate design: repeated confidence intervals (Jennison & Turnbull 1989, JRSS B 51:305-361;
// "Group Sequential Methods", 2000, ch. 9) on a Lan-DeMets alpha-spending boundary (Lan &
// DeMets 1983, Biometrika 70:659-663), the same machinery as `ab --max-pairs`
// (stats/sequential.h), with the O'Brien-Fleming-type spending function
// 4 - 4 Phi(z_{1-alpha/4} / sqrt(t)). Why this design: the gate decides from an interval (fail
// when all of it is beyond the threshold, pass when all of it is within), so it needs
// intervals that hold at every look at once, not a single test; repeated confidence intervals
// give exactly that, and every verdict read from them (fail, pass, warn) keeps its
// fixed-sample error rate over all looks. O'Brien-Fleming rather than Pocock (measured on the
// seeded simulation, bench/gate, docs/BENCHMARKS.md): at 3 legs against a baseline whose
// spread has few degrees of freedom, no interval is narrow enough to pass unchanged code at a
// 3 % threshold under 2 % noise whatever the level, so the alpha Pocock spends there is
// wasted; O'Brien-Fleming keeps the last looks near the fixed design's level, which took
// unchanged code at 2 % noise from 11.9 % to 6.0 % inconclusive (4000 gates). A large regression
// crosses even the strict early boundaries (+8 % at 1 % noise: failed at the first look).
//
// Information: the baseline's m trials are fixed and the gate adds legs, so the change
// estimate at n legs has variance sigma^2 (1/m + 1/n); its information I(n) = 1/(1/m + 1/n)
// has independent increments (the canonical joint distribution, J&T section 3.1: the
// correlation of the estimates at n_j < n_k is sqrt(I_j / I_k)), and t_k = I(n_k) / I(N).
// Each side spends alpha (the per-metric one-sided level, Bonferroni over the metrics that
// can fail): the two-sided boundary is computed at 2 alpha and c_k turned into the one-sided
// nominal level NormalUpper(c_k) of the Welch interval at look k.
//
// Small-sample levels, a baseline that could not grow (issue 34 item 4): the Welch t with the
// baseline's few trials is heavier-tailed than z, and its first looks have few degrees of
// freedom, so each look's level is found on the Welch statistic itself: on seeded null paths
// (equal variances: the statistic is free of the mean and sigma), look by look, the level
// under which the share of paths crossed by look k is the spending function's alpha(t_k),
// held under the calibration's Monte Carlo bound; a path that passes at a look leaves the
// paths of later looks, as the gate stops there. One scale for every look (below) paid the
// first looks' few degrees of freedom at the last looks too.
//
// Small-sample correction, a baseline that could grow, as in stats/sequential.h: all nominal
// levels are scaled by one factor lambda <= 1,
// bisected so that the simulated chance that any look's one-sided Welch p value falls under
// its level is alpha (`calibration_paths` seeded normal paths, equal variances on both
// sides; the Welch t of equal-variance normals is free of the mean and sigma).
//
// The growth rule in the calibration (issue 34): Stein's design is exact for one sample, but the
// gate's Welch interval mixes the baseline's first-stage spread with the legs' own, and a
// baseline that did not grow has a spread biased low by the rule that kept it small: at exactly
// the threshold such gates failed 10.7 % (grown ones 3.2 %, 5.46 % in all against the 5 %
// promised). When the baseline could grow, lambda is bisected on paths that draw the first
// stage, grow it as BaselineTrialsToResolve does and then run the looks, at every noise-to-
// threshold ratio of a grid (the rule depends on it), and the smallest lambda is kept: the
// error rate holds whatever the noise, for grown and ungrown baselines together.
//
// Baseline growth: Stein's two-stage design (Stein 1945, Ann. Math. Stat. 16:243-258): the
// planned trials are the first stage; their spread says how many trials would resolve the
// thresholds (gate/noise.h Resolves), and the baseline grows once to that number, at most
// max_trials. One growth step rather than "grow until the spread looks small", because
// stopping on a small sample spread would bias the spread low and the gate's intervals narrow.
// And, as Stein's design requires, the gate takes a grown baseline's spread from the first
// stage alone (Baseline::first_stage_trials, gate/noise.h): the pooled spread of all trials
// is biased low by the growth rule (the simulated false-FAIL rate at exactly the threshold
// was 6.0 % with it, 5.1 % with the first stage's, 4000 gates).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/baseline.h"
#include "gate/noise.h"
#include "stats/sequential.h"

namespace vouch {

struct GateSequentialPlan {
  std::size_t baseline_trials = 5;  // m: the baseline's trials of the metrics that can fail
  // A grown baseline's first stage (Baseline::first_stage_trials): its spread is taken from
  // these trials alone (gate/noise.h); 0: from all m.
  std::size_t baseline_spread_trials = 0;
  // The --max-trials the baseline was pinned with, when it could grow (Baseline::max_trials);
  // 0: it could not. A baseline that could grow and did not kept its first trials because
  // their spread looked small, so the levels are calibrated on paths that run the growth rule
  // (GrowthScale in gate_sequential.cc), not on the standard normal's alone.
  std::size_t baseline_growth_max = 0;
  std::size_t first_legs = 3;         // the planned legs (--reps): the first look
  std::size_t legs_per_look = 3;      // one block between looks
  std::size_t max_legs = 12;          // --max-reps: the last look
  double alpha = kGateFalseFailRate;  // one-sided, per metric, over all looks
  SpendingFunction spending = SpendingFunction::kOBrienFleming;
  // Null paths of the growth rule's scale (GrowthScale draws a twentieth of them at each of its
  // noise ratios); 0: no small-sample calibration at all (lambda 1).
  std::size_t calibration_paths = 100000;
  // Null paths of a fixed baseline's levels (GateLevelsByLook): at 400,000 the total held is
  // alpha less 0.15 points, 4.3 standard errors of the calibration's own Monte Carlo error.
  std::size_t level_paths = 400000;
  std::uint64_t calibration_seed = 20261201;
};

struct GateSequentialDesign {
  GateSequentialPlan plan;
  std::vector<std::size_t> look_legs;  // legs at each look; the last is max_legs
  std::vector<double> boundary_z;      // c_k of the two-sided 2 alpha boundary
  double small_sample_scale = 1;       // lambda
  std::vector<double> nominal_alpha;   // one-sided level of the interval at each look
};

// nullopt unless 2 <= first_legs <= max_legs, legs_per_look >= 1, baseline_trials >= 2,
// 0 < alpha < 0.5 and at most 200 looks.
std::optional<GateSequentialDesign> MakeGateSequentialDesign(const GateSequentialPlan& plan);

// The design a gate on BASE runs under, one rule for the live gate, the gate of a RECORD and the
// simulation: with MAX_REPS > REPS the sequential one (the first look at REPS legs, then one
// every LOOK_EVERY legs, REPS when 0, up to MAX_REPS);
// else, when the baseline could grow (Baseline::max_trials), a one-look design at REPS legs whose
// level is calibrated on the growth rule; else nullopt (the fixed level). ALPHA: per metric.
// *UNUSABLE is set when a sequential design was asked for and cannot be made (fewer than 2
// legs, or no metric that can fail with 2 or more trials).
std::optional<GateSequentialDesign> GateDesignFor(
    const Baseline& base, std::size_t reps, std::size_t max_reps, std::size_t look_every,
    double alpha, bool* unusable = nullptr,
    SpendingFunction spending = SpendingFunction::kOBrienFleming);

// The 1-based look at LEGS legs: the last look whose planned legs are <= LEGS (0 before the
// first look).
std::size_t GateLookAt(const GateSequentialDesign& design, std::size_t legs);

// Where a gate report stands in a sequential gate (GateReport::sequential).
struct GateLook {
  std::size_t look = 1;  // 1-based
  std::size_t looks = 1;
  std::size_t legs = 0;      // legs run so far
  std::size_t max_legs = 0;  // --max-reps
  double nominal_alpha = 0;  // one-sided level of this look's intervals, per metric
  double overall_alpha = 0;  // the per-metric level over all looks
  // The design's looks (--reps, --look-every): kept in the record, so that `gate RECORD` takes
  // the level of the look the live gate stopped at, not one look's at all its legs.
  std::size_t first_legs = 0;
  std::size_t legs_per_look = 0;
};

// The trials a baseline of metrics BASE should have (Stein's second stage): the largest over
// the metrics that can fail of the trials that resolve its fail threshold with a gate of as
// many legs, at least the trials it has, at most MAX_TRIALS. A metric whose trials are not
// all positive and finite is left out.
std::size_t BaselineTrialsToResolve(const Baseline& base, std::size_t max_trials);

}  // namespace vouch
