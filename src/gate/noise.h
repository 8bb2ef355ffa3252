// The noise a gate must see through. A gate that compares one median with another fails
// unchanged code whenever the noise is above its threshold (the H200 case: a baseline of 3
// trials spread 4.42 %, a 3 % threshold, and FAIL -7.95 % on the same code). Here the run's
// legs are compared with the baseline's trials.
//
// Method: Welch's unequal-variance t interval (Welch 1947, Biometrika 34:28-35; degrees of
// freedom by Welch-Satterthwaite) for the difference of the mean log values, i.e. for the
// ratio of the geometric means now / baseline. Logs, because run-to-run noise of times and
// rates is multiplicative. When one side has a single value, its variance is taken to be the
// other side's (a pooled Student t with that side's degrees of freedom). A metric FAILS only
// when the whole one-sided (1 - alpha) interval lies beyond its threshold, so a change no
// worse than the threshold fails with probability at most alpha (exactly alpha at the
// threshold, far less at no change). alpha is split over the metrics that can fail
// (Bonferroni), so a whole gate of unchanged code fails at most kGateFalseFailRate of the time.
// When the interval straddles the threshold the answer is "inconclusive", never a silent pass
// or a false fail.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "metrics/metric.h"

namespace vouch {

// The false-fail rate a whole gate controls (one-sided, family-wise over its failing metrics).
inline constexpr double kGateFalseFailRate = 0.05;
// The power the baseline's resolution warning asks for: unchanged code passes this often.
inline constexpr double kGateResolutionPower = 0.90;

// An interval for the plain change of now against the baseline, in percent of the baseline
// (the same sense as the gate's change column: a higher-is-better metric down 4 % is -4).
struct ChangeInterval {
  double estimate_pct = 0;  // ratio of geometric means, minus 1
  double lo_pct = 0;        // the interval's ends, each one-sided at 1 - alpha
  double hi_pct = 0;
  double df = 0;       // degrees of freedom (0 when the interval is a point: no noise)
  double alpha = 0;    // one-sided, per metric
  std::string method;  // "welch", "pooled (baseline's noise)", "pooled (run's noise)", "exact"
};

// The interval from BASE (the baseline's trials) and NOW (the run's legs). nullopt, with
// *why set, when noise cannot be judged: fewer than two values on both sides, or a value
// that is not finite and > 0 (no log). ALPHA is one-sided, in (0, 0.5).
// BASE_SPREAD_N (Stein's two-stage design, Stein 1945): when 2 <= BASE_SPREAD_N < |BASE|, the
// baseline grew after its first BASE_SPREAD_N values by a number chosen from their spread; the
// baseline's mean is then taken over all of BASE but its variance from the first BASE_SPREAD_N
// only, with BASE_SPREAD_N - 1 degrees of freedom (under normality the grown mean is
// independent of the first stage's variance, so the interval keeps its level; the pooled
// variance would be biased low by the growth rule and the interval too narrow).
std::optional<ChangeInterval> ChangeIntervalOf(std::span<const double> base,
                                               std::span<const double> now, double alpha,
                                               std::string* why, std::size_t base_spread_n = 0);

// The change in the bad direction (positive = worse) of a plain change in percent.
double BadPct(double change_pct, Better better);

// Whether M trials and a gate of N legs at a log standard deviation SD_LOG resolve a
// threshold of THRESHOLD_PCT (bad direction): unchanged code then passes with probability
// kGateResolutionPower at one-sided ALPHA. Uses the pooled t with m + n - 2 degrees of freedom.
bool Resolves(double sd_log, int m, int n, double threshold_pct, double alpha);
// The smallest N (trials and gate legs alike, 2..1000) that resolves it; nullopt beyond 1000.
std::optional<int> TrialsToResolve(double sd_log, double threshold_pct, double alpha);

// Sample standard deviation of the natural logs of VALUES; nullopt when fewer than two or a
// value is not finite and > 0.
std::optional<double> SdOfLogs(std::span<const double> values);

}  // namespace vouch
