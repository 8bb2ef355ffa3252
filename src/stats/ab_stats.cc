#include "stats/ab_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "stats/welch.h"

namespace vouch {
namespace {

bool AllFinite(std::span<const double> x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

double NormalQuantile(double p) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

// Two-sided normal tail, computed from the complement so tiny p values keep precision.
double NormalTwoSidedP(double z) {
  return 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(),
                                                        std::fabs(z)));
}

// Average ranks (1-based) of x, ties sharing their mean rank (scipy rankdata 'average').
// tie_sizes receives the size of each group of equal values larger than one.
std::vector<double> AverageRanks(std::span<const double> x, std::vector<std::size_t>* tie_sizes) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t i, std::size_t j) { return x[i] < x[j]; });
  std::vector<double> ranks(x.size());
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i + 1;
    while (j < order.size() && x[order[j]] == x[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    if (j - i > 1 && tie_sizes != nullptr) tie_sizes->push_back(j - i);
    i = j;
  }
  return ranks;
}

}  // namespace

std::optional<double> PairLogRatio(double a, double b, MetricDirection direction) {
  if (!std::isfinite(a) || !std::isfinite(b) || a <= 0 || b <= 0) return std::nullopt;
  const double d =
      direction == MetricDirection::kHigherIsBetter ? std::log(b / a) : std::log(a / b);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<double> ClockNormalisedLogRatio(double a, double b, double clock_a_mhz,
                                              double clock_b_mhz, MetricDirection direction) {
  const auto d = PairLogRatio(a, b, direction);
  if (!d || !std::isfinite(clock_a_mhz) || !std::isfinite(clock_b_mhz) || clock_a_mhz <= 0 ||
      clock_b_mhz <= 0) {
    return std::nullopt;
  }
  return *d - std::log(clock_b_mhz / clock_a_mhz);
}

double PairedTInterval::Ratio() const { return std::exp(mean_log); }
double PairedTInterval::RatioLo() const { return std::exp(lo_log); }
double PairedTInterval::RatioHi() const { return std::exp(hi_log); }

std::optional<PairedTInterval> PairedT(std::span<const double> d, double confidence) {
  if (d.size() < 2 || !AllFinite(d) || !(confidence > 0 && confidence < 1)) return std::nullopt;
  const double n = static_cast<double>(d.size());
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / n;
  double ss = 0;
  for (double v : d) ss += (v - mean) * (v - mean);
  PairedTInterval r;
  r.n = d.size();
  r.confidence = confidence;
  r.mean_log = mean;
  r.sd_log = std::sqrt(ss / (n - 1));
  r.t_quantile = StudentTQuantile(n - 1, 0.5 + confidence / 2);
  const double se = r.sd_log / std::sqrt(n);
  r.half_width_log = r.t_quantile * se;
  r.lo_log = mean - r.half_width_log;
  r.hi_log = mean + r.half_width_log;
  if (se > 0) {
    const double t = std::fabs(mean) / se;
    r.p_two_sided = 2.0 * boost::math::cdf(boost::math::complement(
                              boost::math::students_t_distribution<double>(n - 1), t));
  } else {
    r.p_two_sided = mean == 0 ? 1.0 : 0.0;
  }
  return r;
}

std::string_view ToString(WilcoxonMethod method) {
  switch (method) {
    case WilcoxonMethod::kExact:
      return "exact";
    case WilcoxonMethod::kNormalTieCorrected:
      return "normal approximation, tie-corrected";
  }
  return "unknown";
}

std::optional<double> WilcoxonExactTwoSidedP(std::size_t n, double w) {
  if (n == 0 || n > kWilcoxonExactMaxN || !std::isfinite(w)) return std::nullopt;
  const std::size_t total = n * (n + 1) / 2;
  if (w < 0 || w > static_cast<double>(total)) return std::nullopt;
  // pmf of W+ = sum of the ranks with a positive sign, each rank's sign a fair coin:
  // adding rank i maps pmf[k] -> (pmf[k] + pmf[k - i]) / 2. Probabilities, not counts, so
  // n up to kWilcoxonExactMaxN stays in range; the sums are exact to rounding.
  std::vector<double> pmf(total + 1, 0.0);
  pmf[0] = 1.0;
  std::size_t reach = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    reach += i;
    for (std::size_t k = reach; k >= i; --k) pmf[k] = 0.5 * (pmf[k] + pmf[k - i]);
    for (std::size_t k = 0; k < i; ++k) pmf[k] *= 0.5;  // ranks sums that cannot hold i
  }
  const double lower = std::min(w, static_cast<double>(total) - w);
  if (2 * lower == static_cast<double>(total)) return 1.0;  // the centre, as scipy
  const auto upto = static_cast<std::size_t>(std::floor(lower));
  double cdf = 0;
  for (std::size_t k = 0; k <= upto; ++k) cdf += pmf[k];
  return std::min(1.0, 2.0 * cdf);
}

std::optional<WilcoxonResult> WilcoxonSignedRank(std::span<const double> d) {
  if (!AllFinite(d)) return std::nullopt;
  WilcoxonResult r;
  std::vector<double> nonzero;
  for (double v : d) {
    if (v == 0) {
      ++r.n_zeros;
    } else {
      nonzero.push_back(v);
    }
  }
  r.n_used = nonzero.size();
  if (r.n_used == 0) return std::nullopt;
  std::vector<double> magnitude(nonzero.size());
  std::transform(nonzero.begin(), nonzero.end(), magnitude.begin(),
                 [](double v) { return std::fabs(v); });
  std::vector<std::size_t> tie_sizes;
  const std::vector<double> ranks = AverageRanks(magnitude, &tie_sizes);
  r.has_ties = !tie_sizes.empty();
  for (std::size_t i = 0; i < nonzero.size(); ++i) {
    (nonzero[i] > 0 ? r.w_plus : r.w_minus) += ranks[i];
  }
  r.statistic = std::min(r.w_plus, r.w_minus);
  if (!r.has_ties && r.n_used <= kWilcoxonExactMaxN) {
    r.method = WilcoxonMethod::kExact;
    r.p_two_sided = *WilcoxonExactTwoSidedP(r.n_used, r.w_plus);
    return r;
  }
  // Normal approximation: E[W] = n(n+1)/4, Var[W] = n(n+1)(2n+1)/24 - sum(t^3 - t)/48 over
  // groups of t tied |d| (the ranks' tie correction); no continuity correction (scipy).
  r.method = WilcoxonMethod::kNormalTieCorrected;
  const double n = static_cast<double>(r.n_used);
  const double mean = n * (n + 1) / 4;
  double var24 = n * (n + 1) * (2 * n + 1);
  for (std::size_t t : tie_sizes) {
    const double tt = static_cast<double>(t);
    var24 -= 0.5 * tt * (tt * tt - 1);
  }
  const double se = std::sqrt(var24 / 24);
  r.p_two_sided = se > 0 ? std::min(1.0, NormalTwoSidedP((r.statistic - mean) / se)) : 1.0;
  return r;
}

double BinomialHalfTwoSidedP(std::size_t k, std::size_t n) {
  if (n == 0) return 1.0;
  // At p = 1/2 the distribution is symmetric, so scipy's "sum of outcomes no more likely
  // than k" is twice the smaller tail, capped at 1 (k = n/2 gives 1).
  const std::size_t lower = std::min(k, n - std::min(k, n));
  if (2 * lower == n) return 1.0;
  const boost::math::binomial_distribution<double> binom(static_cast<double>(n), 0.5);
  return std::min(1.0, 2.0 * boost::math::cdf(binom, static_cast<double>(lower)));
}

SignCount CountSigns(std::span<const double> d) {
  SignCount s;
  for (double v : d) {
    if (v > 0) {
      ++s.favour_b;
    } else if (v < 0) {
      ++s.favour_a;
    } else {
      ++s.ties;  // zero, and NaN (which favours no one)
    }
  }
  s.p_two_sided = BinomialHalfTwoSidedP(s.favour_b, s.favour_a + s.favour_b);
  return s;
}

std::optional<double> Percentile(std::span<const double> x, double q_pct) {
  if (x.empty() || !AllFinite(x) || !(q_pct >= 0 && q_pct <= 100)) return std::nullopt;
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  const double h = static_cast<double>(sorted.size() - 1) * q_pct / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double NoiseBand::Percent() const { return std::expm1(half_width_log) * 100.0; }

std::optional<NoiseBand> NoiseBandFromCalibration(std::span<const double> aa_d, double percentile) {
  if (aa_d.size() < kMinCalibrationPairs || !AllFinite(aa_d)) return std::nullopt;
  std::vector<double> magnitude(aa_d.size());
  std::transform(aa_d.begin(), aa_d.end(), magnitude.begin(),
                 [](double v) { return std::fabs(v); });
  const auto p = Percentile(magnitude, percentile);
  if (!p) return std::nullopt;
  NoiseBand band;
  band.half_width_log = *p;
  band.source = NoiseBand::Source::kCalibrated;
  band.calibration_pairs = aa_d.size();
  band.percentile = percentile;
  return band;
}

std::optional<NoiseBand> NoiseBandFromPercent(double band_pct) {
  if (!std::isfinite(band_pct) || band_pct < 0) return std::nullopt;
  NoiseBand band;
  band.half_width_log = std::log1p(band_pct / 100.0);
  band.source = NoiseBand::Source::kGiven;
  return band;
}

std::string_view ToString(AbVerdict verdict) {
  switch (verdict) {
    case AbVerdict::kBFaster:
      return "B faster";
    case AbVerdict::kBSlower:
      return "B slower";
    case AbVerdict::kNoChange:
      return "no change";
    case AbVerdict::kInconclusive:
      return "inconclusive";
    case AbVerdict::kRefused:
      return "refused";
  }
  return "unknown";
}

AbVerdict ClassifyInterval(double lo_log, double hi_log, double band_log) {
  if (lo_log > band_log) return AbVerdict::kBFaster;
  if (hi_log < -band_log) return AbVerdict::kBSlower;
  if (lo_log >= -band_log && hi_log <= band_log) return AbVerdict::kNoChange;
  return AbVerdict::kInconclusive;
}

std::optional<std::size_t> FurtherPairsEstimate(double mean_log, double sd_log, std::size_t n,
                                                double band_log, double confidence, double power,
                                                std::size_t pairs_per_block) {
  if (n < 2 || !(sd_log > 0) || !std::isfinite(sd_log) || !std::isfinite(mean_log) ||
      !(confidence > 0 && confidence < 1) || !(power > 0 && power < 1)) {
    return std::nullopt;
  }
  const double delta = std::fabs(std::fabs(mean_log) - band_log);
  if (!(delta > 0)) return std::nullopt;
  const double t = StudentTQuantile(static_cast<double>(n - 1), 0.5 + confidence / 2);
  const double z = NormalQuantile(power);
  const double needed = std::ceil(std::pow((t + z) * sd_log / delta, 2));
  // Past ~10^9 pairs the number only says "never"; keep it representable.
  const double capped = std::min(needed, 1e9);
  const std::size_t block = std::max<std::size_t>(pairs_per_block, 1);
  std::size_t further = capped > static_cast<double>(n)
                            ? static_cast<std::size_t>(capped) - n
                            : block;  // inconclusive now: at least one more block
  further = (further + block - 1) / block * block;
  return further;
}

std::optional<double> MinimumDetectableEffectPct(const AbDecision& d) {
  if (!d.interval) return std::nullopt;
  return 100 * std::expm1(d.band.half_width_log + d.interval->half_width_log);
}

std::optional<std::size_t> PairsForEquivalence(const AbDecision& d, double confidence, double power,
                                               std::size_t pairs_per_block) {
  if (!d.interval || d.interval->n < 2 || !(d.interval->sd_log > 0) ||
      !(d.band.half_width_log > 0) || !(confidence > 0 && confidence < 1) ||
      !(power > 0 && power < 1))
    return std::nullopt;
  const double t = StudentTQuantile(static_cast<double>(d.interval->n - 1), 0.5 + confidence / 2);
  const double z = NormalQuantile(0.5 + power / 2);
  const double n =
      std::min(std::ceil(std::pow((t + z) * d.interval->sd_log / d.band.half_width_log, 2)), 1e9);
  const std::size_t block = std::max<std::size_t>(pairs_per_block, 1);
  const auto pairs = std::max<std::size_t>(static_cast<std::size_t>(n), d.interval->n);
  return (pairs + block - 1) / block * block;
}

AbDecision DecideAb(std::span<const double> d, const NoiseBand& band, const AbOptions& options,
                    std::span<const std::string> invalid_pair_reasons) {
  AbDecision out;
  out.band = band;
  out.reasons.assign(invalid_pair_reasons.begin(), invalid_pair_reasons.end());
  std::vector<double> valid;
  valid.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (std::isfinite(d[i])) {
      valid.push_back(d[i]);
    } else {
      out.reasons.push_back(fmt::format("pair {}: log ratio is not finite, excluded", i));
    }
  }
  out.valid_pairs = valid.size();
  if (!(band.half_width_log >= 0) || !std::isfinite(band.half_width_log) ||
      !(options.confidence > 0 && options.confidence < 1)) {
    out.verdict = AbVerdict::kRefused;
    out.reasons.push_back(fmt::format(
        "noise band half width {} (log) and confidence {} must be finite, >= 0 and in (0, 1): "
        "calibrate the band or give it in percent",
        band.half_width_log, options.confidence));
    return out;
  }
  out.signs = CountSigns(valid);
  out.wilcoxon = WilcoxonSignedRank(valid);
  out.interval = PairedT(valid, options.confidence);
  const std::size_t min_pairs = std::max<std::size_t>(options.min_pairs, 2);
  if (valid.size() < min_pairs || !out.interval) {
    out.verdict = AbVerdict::kRefused;
    out.reasons.push_back(fmt::format(
        "only {} valid pair{} remain{}, at least {} are needed: run more pairs or fix the "
        "excluded ones",
        valid.size(), valid.size() == 1 ? "" : "s", valid.size() == 1 ? "s" : "", min_pairs));
    return out;
  }
  const PairedTInterval& ci = *out.interval;
  out.verdict = ClassifyInterval(ci.lo_log, ci.hi_log, band.half_width_log);
  if (options.majority_rule) {
    const SignCount& s = out.signs;
    if (out.verdict == AbVerdict::kBFaster && s.favour_b <= s.favour_a) {
      out.reasons.push_back(fmt::format(
          "majority rule: the interval lies above the band but only {} of {} pairs favour B",
          s.favour_b, valid.size()));
      out.verdict = AbVerdict::kInconclusive;
    } else if (out.verdict == AbVerdict::kBSlower && s.favour_a <= s.favour_b) {
      out.reasons.push_back(fmt::format(
          "majority rule: the interval lies below the band but only {} of {} pairs favour A",
          s.favour_a, valid.size()));
      out.verdict = AbVerdict::kInconclusive;
    }
  }
  if (out.verdict == AbVerdict::kInconclusive) {
    out.further_pairs =
        FurtherPairsEstimate(ci.mean_log, ci.sd_log, ci.n, band.half_width_log, options.confidence,
                             options.further_pairs_power, options.pairs_per_block);
  }
  return out;
}

AbComparison CompareArms(std::span<const AbPair> pairs, MetricDirection direction,
                         const NoiseBand& band, const AbOptions& options,
                         std::span<const std::string> invalid_pair_reasons) {
  std::vector<double> plain;
  std::vector<double> normalised;
  std::vector<std::string> plain_reasons(invalid_pair_reasons.begin(), invalid_pair_reasons.end());
  std::vector<std::string> norm_reasons = plain_reasons;
  double clock_sum = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const AbPair& p = pairs[i];
    const auto d = PairLogRatio(p.a, p.b, direction);
    if (!d) {
      const std::string why = fmt::format(
          "pair {}: metric A={} B={} is not a positive finite number, excluded", i, p.a, p.b);
      plain_reasons.push_back(why);
      norm_reasons.push_back(why);
      continue;
    }
    plain.push_back(*d);
    const auto dn = ClockNormalisedLogRatio(p.a, p.b, p.clock_a_mhz, p.clock_b_mhz, direction);
    if (!dn) {
      norm_reasons.push_back(fmt::format(
          "pair {}: SM clock A={} MHz B={} MHz is not a positive finite number, excluded from "
          "the clock-normalised ratio",
          i, p.clock_a_mhz, p.clock_b_mhz));
      continue;
    }
    normalised.push_back(*dn);
    clock_sum += *d - *dn;
  }
  AbComparison out;
  out.plain = DecideAb(plain, band, options, plain_reasons);
  out.clock_normalised = DecideAb(normalised, band, options, norm_reasons);
  if (!normalised.empty()) clock_sum /= static_cast<double>(normalised.size());
  if (!normalised.empty()) out.clock_explained_log = clock_sum;
  return out;
}

}  // namespace vouch
