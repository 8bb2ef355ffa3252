#include "gate/noise.h"

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <vector>

#include "stats/welch.h"

namespace vouch {
namespace {

bool AllPositive(std::span<const double> x) {
  for (double v : x)
    if (!std::isfinite(v) || v <= 0) return false;
  return true;
}

struct LogStats {
  double mean = 0, var = 0;
  size_t n = 0;
};

LogStats Stats(std::span<const double> x) {
  LogStats s;
  s.n = x.size();
  for (double v : x) s.mean += std::log(v);
  s.mean /= static_cast<double>(s.n);
  if (s.n > 1) {
    for (double v : x) s.var += (std::log(v) - s.mean) * (std::log(v) - s.mean);
    s.var /= static_cast<double>(s.n - 1);
  }
  return s;
}

double Pct(double log_ratio) { return 100.0 * std::expm1(log_ratio); }

}  // namespace

double BadPct(double change_pct, Better better) {
  return better == Better::kHigher ? -change_pct : change_pct;
}

std::optional<double> SdOfLogs(std::span<const double> values) {
  if (values.size() < 2 || !AllPositive(values)) return std::nullopt;
  return std::sqrt(Stats(values).var);
}

std::optional<ChangeInterval> ChangeIntervalOf(std::span<const double> base,
                                               std::span<const double> now, double alpha,
                                               std::string* why, std::size_t base_spread_n) {
  if (base.empty() || now.empty()) {
    *why = "no values";
    return std::nullopt;
  }
  if (!AllPositive(base) || !AllPositive(now)) {
    *why = "a value is not > 0, so the noise cannot be judged on a log scale";
    return std::nullopt;
  }
  if (base.size() < 2 && now.size() < 2) {
    *why = "one value on each side: no noise estimate";
    return std::nullopt;
  }
  LogStats b = Stats(base), n = Stats(now);
  // Stein: the spread (and its degrees of freedom) from the first stage alone.
  double b_df = static_cast<double>(b.n) - 1;
  const bool stein = base_spread_n >= 2 && base_spread_n < base.size();
  if (stein) {
    b.var = Stats(base.first(base_spread_n)).var;
    b_df = static_cast<double>(base_spread_n) - 1;
  }
  const double nb = static_cast<double>(b.n), nn = static_cast<double>(n.n);
  ChangeInterval ci;
  ci.alpha = alpha;
  double se = 0;
  if (b.n >= 2 && n.n >= 2) {
    const WelchT w = Welch({b.mean, b.var, nb, b_df}, {n.mean, n.var, nn, nn - 1});
    se = w.se;
    ci.method = stein ? "welch (Stein)" : "welch";
    ci.df = w.df;
  } else if (b.n >= 2) {
    se = std::sqrt(b.var * (1 / nb + 1 / nn));
    ci.method = "pooled (baseline's noise)";
    ci.df = b_df;
  } else {
    se = std::sqrt(n.var * (1 / nb + 1 / nn));
    ci.method = "pooled (run's noise)";
    ci.df = nn - 1;
  }
  const double d = n.mean - b.mean;
  double half = 0;
  if (se > 0 && ci.df > 0) {
    half = StudentTQuantile(ci.df, 1 - alpha) * se;
  } else {
    ci.method = "exact";  // every value equal on both sides: no noise to see through
    ci.df = 0;
  }
  ci.estimate_pct = Pct(d);
  ci.lo_pct = Pct(d - half);
  ci.hi_pct = Pct(d + half);
  return ci;
}

bool Resolves(double sd_log, int m, int n, double threshold_pct, double alpha) {
  if (!(sd_log > 0)) return true;
  if (m < 1 || n < 1 || m + n < 3) return false;
  // The threshold as a log change in the bad direction (the smaller of the two senses).
  const double tau = std::min(std::log1p(threshold_pct / 100.0),
                              threshold_pct < 100 ? -std::log1p(-threshold_pct / 100.0) : 1e9);
  const double se = sd_log * std::sqrt(1.0 / m + 1.0 / n);
  const double t = StudentTQuantile(m + n - 2, 1 - alpha);
  const double z =
      boost::math::quantile(boost::math::normal_distribution<double>(), kGateResolutionPower);
  return (t + z) * se <= tau;
}

std::optional<int> TrialsToResolve(double sd_log, double threshold_pct, double alpha) {
  for (int k = 2; k <= 1000; ++k)
    if (Resolves(sd_log, k, k, threshold_pct, alpha)) return k;
  return std::nullopt;
}

}  // namespace vouch
