// A/B statistics and verdicts (SPEC "A/B verdicts", seed 001): pure functions over the
// per-pair log ratios d of the headline metric. No I/O; std::optional when the input
// cannot support the statistic (too few samples, non-finite values).
//
// Conventions, all in one place so that a reader of a report can check them:
//  * d = ln(B/A) for a higher-is-better metric, ln(A/B) for a lower-is-better one, so a
//    positive d always means B is better ("B faster").
//  * Interval: paired t on d, exp() of its ends is the ratio interval.
//  * Wilcoxon signed rank: zeros dropped (scipy zero_method='wilcox'); exact null
//    distribution (dynamic programming over ranks) when no |d| ties and n <= 200;
//    otherwise the normal approximation with the tie correction of the variance and no
//    continuity correction (scipy's method='approx', correction=False).
//  * Sign test: ties (d == 0) dropped, exact two-sided binomial test at p = 1/2.
//  * Noise band: the 95th percentile of |d| over the A/A pairs, linear interpolation
//    between order statistics (numpy's default, Hyndman & Fan type 7).
#pragma once

#include <cstddef>      // size_t
#include <optional>     // statistics that need more samples than given
#include <span>         // read-only views of the d values
#include <string>       // reasons
#include <string_view>  // ToString
#include <vector>       // reasons

namespace vouch {

enum class MetricDirection { kHigherIsBetter, kLowerIsBetter };

// The oriented log ratio of one pair; nullopt unless both values are finite and > 0.
std::optional<double> PairLogRatio(double a, double b, MetricDirection direction);

// The oriented log ratio after removing the SM clock: d - ln(clock_b / clock_a).
// For a rate (higher is better) this is ln((B/clockB)/(A/clockA)), work per cycle; for a
// duration (lower is better) it is ln((A*clockA)/(B*clockB)), cycles per run. Both are
// the same formula in oriented form, and both assume the metric scales with the clock
// (a GPU-bound metric); the part of d the clock explains is ln(clock_b / clock_a).
std::optional<double> ClockNormalisedLogRatio(double a, double b, double clock_a_mhz,
                                              double clock_b_mhz, MetricDirection direction);

struct PairedTInterval {
  std::size_t n = 0;
  double confidence = 0.95;  // two-sided coverage of [lo_log, hi_log]
  double mean_log = 0;       // mean of d
  double sd_log = 0;         // sample standard deviation of d (n - 1)
  double t_quantile = 0;     // Student t quantile used, df = n - 1
  double half_width_log = 0;
  double lo_log = 0;
  double hi_log = 0;
  double p_two_sided = 1;  // paired t test of mean d == 0
  double Ratio() const;    // exp(mean_log): the geometric-mean ratio, > 1 means B better
  double RatioLo() const;
  double RatioHi() const;
};

// Paired-t interval on d. nullopt when n < 2, a value is not finite, or confidence is
// not in (0, 1).
std::optional<PairedTInterval> PairedT(std::span<const double> d, double confidence = 0.95);

enum class WilcoxonMethod { kExact, kNormalTieCorrected };
std::string_view ToString(WilcoxonMethod method);

struct WilcoxonResult {
  std::size_t n_used = 0;   // pairs after dropping zeros
  std::size_t n_zeros = 0;  // pairs with d == 0, dropped
  bool has_ties = false;    // equal |d| among the pairs used
  double w_plus = 0;        // rank sum of d > 0 (favouring B)
  double w_minus = 0;       // rank sum of d < 0
  double statistic = 0;     // min(w_plus, w_minus), scipy's two-sided statistic
  double p_two_sided = 1;
  WilcoxonMethod method = WilcoxonMethod::kExact;
};

// Largest n (after dropping zeros) for which the exact distribution is computed; above it
// the normal approximation is accurate to far better than the p values are read.
inline constexpr std::size_t kWilcoxonExactMaxN = 200;

// nullopt when no non-zero d remains or a value is not finite.
std::optional<WilcoxonResult> WilcoxonSignedRank(std::span<const double> d);

// Exact two-sided p of the signed-rank statistic w (an integer rank sum of either sign)
// for n untied, non-zero pairs: min(1, 2 * P(W <= min(w, n(n+1)/2 - w))), and exactly 1
// at the centre (as scipy). nullopt when n is 0 or above kWilcoxonExactMaxN.
std::optional<double> WilcoxonExactTwoSidedP(std::size_t n, double w);

struct SignCount {
  std::size_t favour_b = 0;  // d > 0
  std::size_t favour_a = 0;  // d < 0
  std::size_t ties = 0;      // d == 0
  double p_two_sided = 1;    // exact binomial test of favour_b out of favour_a + favour_b
};
SignCount CountSigns(std::span<const double> d);

// Exact two-sided binomial test at p = 1/2 (scipy.stats.binomtest(k, n).pvalue).
double BinomialHalfTwoSidedP(std::size_t k, std::size_t n);

// Percentile q (0..100) with linear interpolation between order statistics
// (numpy.percentile default). nullopt on empty input, non-finite values or q outside.
std::optional<double> Percentile(std::span<const double> x, double q_pct);

inline constexpr double kDefaultBandPercentile = 95.0;
// Smallest A/A calibration: two full ABBA blocks. Ten or more pairs are recommended,
// since with K pairs the 95th percentile is an interpolation between the two largest.
inline constexpr std::size_t kMinCalibrationPairs = 4;

struct NoiseBand {
  enum class Source { kCalibrated, kGiven };
  double half_width_log = 0;  // the band is [-half_width_log, +half_width_log] in d
  Source source = Source::kGiven;
  std::size_t calibration_pairs = 0;  // kCalibrated only
  double percentile = 0;              // kCalibrated only
  double Percent() const;             // (exp(half_width_log) - 1) * 100
};

// From the d (or |d|) values of K A/A pairs; nullopt when K < kMinCalibrationPairs or a
// value is not finite.
std::optional<NoiseBand> NoiseBandFromCalibration(std::span<const double> aa_d,
                                                  double percentile = kDefaultBandPercentile);
// A band given in percent: half width ln(1 + pct/100); nullopt unless 0 <= pct < inf.
std::optional<NoiseBand> NoiseBandFromPercent(double band_pct);

enum class AbVerdict { kBFaster, kBSlower, kNoChange, kInconclusive, kRefused };
std::string_view ToString(AbVerdict verdict);  // "B faster", "B slower", "no change", ...

// Two ABBA blocks: each arm in each position twice (order and linear drift balanced),
// three degrees of freedom (t = 3.18; one block has df 1 and t = 12.7), and a majority
// that means something (3 of 4). Three pairs cannot be whole ABBA blocks.
inline constexpr std::size_t kDefaultMinPairs = 4;
// "Likely" in the further-pairs estimate: the chance that the interval clears the band
// edge after that many pairs, if the observed mean and sd are the truth.
inline constexpr double kDefaultFurtherPairsPower = 0.8;

struct AbOptions {
  double confidence = 0.95;
  std::size_t min_pairs = kDefaultMinPairs;
  std::size_t pairs_per_block = 2;  // ABBA: the further-pairs estimate is whole blocks
  // Seed 001's majority rule: a directional verdict also needs more pairs favouring the
  // winner than the loser; otherwise it is inconclusive, with the reason.
  bool majority_rule = true;
  double further_pairs_power = kDefaultFurtherPairsPower;
};

struct AbDecision {
  AbVerdict verdict = AbVerdict::kRefused;
  std::vector<std::string> reasons;  // refusals, excluded pairs, rule notes
  std::size_t valid_pairs = 0;
  std::optional<PairedTInterval> interval;
  std::optional<WilcoxonResult> wilcoxon;
  SignCount signs;
  NoiseBand band;
  std::optional<std::size_t> further_pairs;  // kInconclusive only, when estimable
};

// The SPEC rule on a log-space interval and band half width b >= 0:
// lo > b: B faster; hi < -b: B slower; -b <= lo and hi <= b: no change; else inconclusive.
AbVerdict ClassifyInterval(double lo_log, double hi_log, double band_log);

// Further pairs that would likely decide an inconclusive result. With delta the distance
// of |mean| to the band edge, the interval clears the edge with probability `power` once
//   n* = ((t_{1-alpha/2, n-1} + z_power) * sd / delta)^2,
// the textbook sample size for a confidence interval to exclude a boundary at distance
// delta, with the current df's t as a small-sample allowance. Returns n* - n rounded up
// to whole blocks; nullopt when sd == 0, delta == 0 or n < 2.
std::optional<std::size_t> FurtherPairsEstimate(double mean_log, double sd_log, std::size_t n,
                                                double band_log, double confidence, double power,
                                                std::size_t pairs_per_block);

// The smallest effect a verdict could see (issue 23), in percent: the band plus the half
// width of the interval actually obtained (exp(b + h) - 1). An effect smaller than it could
// not have given `B faster` or `B slower` with this interval. nullopt without an interval.
std::optional<double> MinimumDetectableEffectPct(const AbDecision& decision);

// `no change` is an equivalence claim, the two one-sided tests (TOST, Schuirmann 1987, J.
// Pharmacokinet. Biopharm. 15:657-680) read off the interval: the whole (confidence) interval
// inside the band, so each one-sided test is at (1 - confidence) / 2 and an A/B whose true
// effect is outside the band says `no change` at most that often. The pairs in all that would
// bring the band within reach at the measured noise: with no true effect, the interval fits
// inside the band with probability `power` once n = ((t + z_{(1+power)/2}) sd / b)^2 (the TOST
// sample size at a true difference of 0), in whole blocks. nullopt when the band or sd is 0.
std::optional<std::size_t> PairsForEquivalence(const AbDecision& decision, double confidence,
                                               double power, std::size_t pairs_per_block);

// The verdict on the valid pairs' d. invalid_pair_reasons are the pairing-rule refusals of
// pairs already excluded by the caller; they are always carried into reasons, and when
// fewer than min_pairs valid pairs remain the verdict is kRefused with all of them.
// Non-finite d values are excluded here, with a reason.
AbDecision DecideAb(std::span<const double> d, const NoiseBand& band, const AbOptions& options = {},
                    std::span<const std::string> invalid_pair_reasons = {});

// One pair of legs as the A/B driver measured them (headline metric and mean busy SM clock).
struct AbPair {
  double a = 0;
  double b = 0;
  double clock_a_mhz = 0;
  double clock_b_mhz = 0;
};

struct AbComparison {
  AbDecision plain;             // on d
  AbDecision clock_normalised;  // on d - ln(clock_b/clock_a), same band and options
  // Mean of ln(clock_b/clock_a) over the pairs used: the part of mean d the clock explains.
  std::optional<double> clock_explained_log;
};

// Both decisions from raw pairs; a pair with a non-positive or non-finite value or clock is
// excluded with a reason naming its index (0-based).
AbComparison CompareArms(std::span<const AbPair> pairs, MetricDirection direction,
                         const NoiseBand& band, const AbOptions& options = {},
                         std::span<const std::string> invalid_pair_reasons = {});

}  // namespace vouch
