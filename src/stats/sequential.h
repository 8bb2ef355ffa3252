// Sequential A/B (SPEC "A/B verdicts": decide after each block, within a maximum number
// of pairs, with the confidence level corrected for the repeated looks).
//
// Method: repeated confidence intervals (Jennison & Turnbull 1989, JRSS B 51:305-361;
// "Group Sequential Methods", 2000, ch. 9) on a Lan-DeMets alpha-spending boundary
// (Lan & DeMets 1983, Biometrika 70:659-663), t = pairs / max pairs: by default the
// Pocock-type spending function alpha ln(1 + (e - 1) t) (Lan & DeMets 1983), or the
// O'Brien-Fleming type, symmetric two-sided: each side spends alpha/2 by
// 2 - 2 Phi(z_{1-alpha/4} / sqrt(t)) (as R ldbounds and gsDesign).
// The two-sided boundaries c_k are exact for a normal statistic with independent
// increments: they are found look by look so that P(first crossing at look k) equals
// alpha(t_k) - alpha(t_{k-1}), by the recursive numerical integration of Armitage,
// McPherson & Rowe (1969, JRSS A 132:235-244; Jennison & Turnbull ch. 19). Each c_k is
// turned into a nominal two-sided level alpha_k = 2(1 - Phi(c_k)); the interval at look k
// is the paired-t interval at confidence 1 - alpha_k (df = n - 1: the usual transfer of a
// z boundary to a t test by matching p values, J&T section 3.8).
//
// Small-sample correction: with the variance re-estimated at every look and df as low as
// 3, that transfer is anti-conservative (simulated overall level 5.5-5.7 % for a nominal
// 5 %, 16 pairs max). So the design scales all nominal levels by one factor lambda <= 1,
// found by bisection so that the simulated probability of any |t_k| >= its quantile over
// `calibration_paths` seeded normal paths equals alpha. The statistic (mean - mu)/(s/sqrt n)
// is free of mu and sigma, so one simulation on N(0, 1) holds for every effect and noise
// (for normal d); the spending shape is kept, only its level is corrected.
//
// Every verdict at a look comes from that interval and the noise band by the fixed-sample
// rule, so the chance that any look ever claims a direction wrongly stays at alpha overall
// (the intervals are simultaneous: Jennison & Turnbull's repeated confidence intervals).
#pragma once

#include <cstddef>   // size_t
#include <cstdint>   // calibration seed
#include <optional>  // invalid plans
#include <span>      // d values, information fractions
#include <string>    // reasons
#include <vector>    // boundaries

#include "stats/ab_stats.h"

namespace vouch {

enum class SpendingFunction {
  kOBrienFleming,  // alpha(t) = 4 - 4 Phi(z_{1-alpha/4}/sqrt(t)): little spent early
  kPocock,         // alpha(t) = alpha ln(1 + (e - 1) t): even spending, earlier stops
};

// The cumulative two-sided alpha spent by information fraction t in [0, 1].
// The standard normal upper tail, P(Z > z).
double NormalUpper(double z);

double AlphaSpent(SpendingFunction spending, double alpha, double t);

// Two-sided z boundaries c_k for looks at increasing information fractions t_k in (0, 1]
// (the last need not be 1). nullopt unless 0 < alpha < 1 and t strictly increases in (0, 1].
std::optional<std::vector<double>> SpendingBoundaries(std::span<const double> info_fractions,
                                                      double alpha, SpendingFunction spending);

struct SequentialPlan {
  std::size_t max_pairs = 16;
  std::size_t first_look_pairs = kDefaultMinPairs;  // two ABBA blocks
  std::size_t pairs_per_look = 2;                   // one ABBA block between looks
  double confidence = 0.95;                         // overall, over all looks
  // Pocock-type by default: an A/B on a GPU wants the clear cases stopped at the first
  // looks; at the same overall alpha it stops a 3 % effect at ~4 pairs where the
  // O'Brien-Fleming type needs ~7.5 (docs/bench/ab.md), and with max_pairs 16 it still has
  // more power on a 1 % effect than a fixed 10 pairs.
  SpendingFunction spending = SpendingFunction::kPocock;
  AbOptions options;  // min pairs, majority rule; its confidence is set per look
  // Normal paths for the small-sample correction; 0 turns it off (plain p-value transfer).
  // 100000 paths put the Monte Carlo error of the overall level near 0.07 points.
  std::size_t calibration_paths = 100000;
  std::uint64_t calibration_seed = 20261129;
};

struct SequentialDesign {
  SequentialPlan plan;
  std::vector<std::size_t> look_pairs;  // planned pairs at each look; the last is max_pairs
  std::vector<double> boundary_z;       // c_k, for a known variance
  double small_sample_scale = 1;        // lambda: nominal_alpha = lambda * 2(1 - Phi(c_k))
  std::vector<double> nominal_alpha;    // two-sided level of the interval at each look
};

// More looks than any A/B will run; bounds the design's memory and time.
inline constexpr std::size_t kMaxSequentialLooks = 500;

// nullopt unless 2 <= first_look_pairs <= max_pairs, pairs_per_look >= 1, 0 < confidence
// < 1 and the plan has at most kMaxSequentialLooks looks. Compute once per plan: the integration
// and the calibration take about 0.1 s each with the defaults.
std::optional<SequentialDesign> MakeSequentialDesign(const SequentialPlan& plan);

struct SequentialStep {
  bool stop = false;     // a verdict was reached, or this was the last look
  std::size_t look = 0;  // 1-based
  double nominal_confidence = 0;
  AbDecision decision;  // the verdict at this look (kInconclusive/kRefused: continue)
};

// The verdict at look `look` (1-based) on the d of all valid pairs so far. Stops on
// `B faster`, `B slower` or `no change`; at the last look it stops whatever the verdict.
// A refusal before the last look (too few valid pairs yet) continues. If pairs were
// excluded, d holds fewer than the planned pairs: the look's planned level is still used,
// which is slightly anti-conservative only in proportion to the share excluded.
// nullopt when look is 0 or beyond the design's looks.
std::optional<SequentialStep> SequentialLook(
    std::span<const double> d, std::size_t look, const SequentialDesign& design,
    const NoiseBand& band, std::span<const std::string> invalid_pair_reasons = {});

// The same with the default plan for max_pairs (builds the design on each call).
std::optional<SequentialStep> SequentialLook(std::span<const double> d, std::size_t look,
                                             std::size_t max_pairs, const NoiseBand& band);

}  // namespace vouch
