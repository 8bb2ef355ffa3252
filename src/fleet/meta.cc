#include "fleet/meta.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace vouch {

std::optional<Stratum> MakeStratum(const std::string& name, std::span<const double> d) {
  if (d.size() < 2) return std::nullopt;
  double sum = 0;
  for (double x : d) {
    if (!std::isfinite(x)) return std::nullopt;
    sum += x;
  }
  const double n = static_cast<double>(d.size());
  const double mean = sum / n;
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  Stratum s;
  s.name = name;
  s.mean_log = mean;
  s.n = d.size();
  s.var_of_mean = std::max(ss / (n - 1) / n, kMinStratumVariance);
  return s;
}

void FloorAtPooledVariance(std::vector<Stratum>& strata) {
  double ss = 0, df = 0;
  for (const auto& s : strata) {
    if (s.n < 2) continue;
    const double n = static_cast<double>(s.n);
    ss += s.var_of_mean * n * (n - 1);
    df += n - 1;
  }
  if (df <= 0) return;
  const double pooled = ss / df;
  for (auto& s : strata)
    if (s.n >= 1) s.var_of_mean = std::max(s.var_of_mean, pooled / static_cast<double>(s.n));
}

std::optional<MetaResult> RandomEffects(std::span<const Stratum> strata, double confidence) {
  const std::size_t k = strata.size();
  if (k < 2 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  double sw = 0, sw2 = 0, swy = 0;
  for (const auto& s : strata) {
    if (!std::isfinite(s.mean_log) || !std::isfinite(s.var_of_mean) || s.var_of_mean <= 0)
      return std::nullopt;
    const double w = 1 / s.var_of_mean;
    sw += w;
    sw2 += w * w;
    swy += w * s.mean_log;
  }
  MetaResult r;
  r.k = k;
  r.confidence = confidence;
  r.fixed_mu_log = swy / sw;
  for (const auto& s : strata)
    r.q += (s.mean_log - r.fixed_mu_log) * (s.mean_log - r.fixed_mu_log) / s.var_of_mean;
  const double df = static_cast<double>(k - 1);
  const double c = sw - sw2 / sw;
  r.tau2 = c > 0 ? std::max(0.0, (r.q - df) / c) : 0;
  r.q_p = boost::math::cdf(
      boost::math::complement(boost::math::chi_squared_distribution<>(df), std::max(r.q, 0.0)));
  r.i2 = r.q > df ? (r.q - df) / r.q : 0;

  double sws = 0, swsy = 0;
  for (const auto& s : strata) {
    const double w = 1 / (s.var_of_mean + r.tau2);
    sws += w;
    swsy += w * s.mean_log;
  }
  r.mu_log = swsy / sws;
  const double se_dl = std::sqrt(1 / sws);
  double resid = 0;
  for (const auto& s : strata) {
    const double w = 1 / (s.var_of_mean + r.tau2);
    resid += w * (s.mean_log - r.mu_log) * (s.mean_log - r.mu_log);
  }
  const double se_hk = std::sqrt(resid / df / sws);
  const double alpha = 1 - confidence;
  const double t = boost::math::quantile(boost::math::students_t_distribution<>(df), 1 - alpha / 2);
  const double z = boost::math::quantile(boost::math::normal_distribution<>(), 1 - alpha / 2);
  // HKSJ with t(k-1), but never narrower than the DL normal interval.
  if (t * se_hk >= z * se_dl) {
    r.se_log = se_hk;
    r.lo_log = r.mu_log - t * se_hk;
    r.hi_log = r.mu_log + t * se_hk;
    r.interval_method = "HKSJ t(k-1)";
  } else {
    r.se_log = se_dl;
    r.lo_log = r.mu_log - z * se_dl;
    r.hi_log = r.mu_log + z * se_dl;
    r.interval_method = "DL normal";
  }
  return r;
}

namespace {

// RandomEffects' tau^2 and pooled mean over STRATA without the one at SKIP, and the sum of
// the random-effects weights: the same sums in the same order, so the same numbers, without
// copying the others or computing an interval (its quantiles were most of the leave-one-out
// test's time at hundreds of nodes).
struct PooledWithout {
  double tau2 = 0, mu_log = 0, sum_weights = 0;
};
std::optional<PooledWithout> PoolWithout(std::span<const Stratum> strata, std::size_t skip) {
  const std::size_t k = strata.size() - 1;
  if (k < 2) return std::nullopt;
  double sw = 0, sw2 = 0, swy = 0;
  for (std::size_t j = 0; j < strata.size(); ++j) {
    if (j == skip) continue;
    const Stratum& s = strata[j];
    if (!std::isfinite(s.mean_log) || !std::isfinite(s.var_of_mean) || s.var_of_mean <= 0)
      return std::nullopt;
    const double w = 1 / s.var_of_mean;
    sw += w;
    sw2 += w * w;
    swy += w * s.mean_log;
  }
  const double fixed = swy / sw;
  double q = 0;
  for (std::size_t j = 0; j < strata.size(); ++j)
    if (j != skip)
      q += (strata[j].mean_log - fixed) * (strata[j].mean_log - fixed) / strata[j].var_of_mean;
  const double df = static_cast<double>(k - 1);
  const double c = sw - sw2 / sw;
  PooledWithout p;
  p.tau2 = c > 0 ? std::max(0.0, (q - df) / c) : 0;
  double swsy = 0;
  for (std::size_t j = 0; j < strata.size(); ++j) {
    if (j == skip) continue;
    const double w = 1 / (strata[j].var_of_mean + p.tau2);
    p.sum_weights += w;
    swsy += w * strata[j].mean_log;
  }
  p.mu_log = swsy / p.sum_weights;
  return p;
}

}  // namespace

std::vector<NodeOutlier> LeaveOneOut(std::span<const Stratum> strata, double alpha,
                                     double band_log) {
  std::vector<NodeOutlier> out;
  const std::size_t k = strata.size();
  if (k < 3) return out;
  for (std::size_t i = 0; i < k; ++i) {
    auto m = PoolWithout(strata, i);
    if (!m) continue;
    // The others' own DL standard error (not the HKSJ one): the z below is a normal deviate.
    const double se2 = 1 / m->sum_weights;
    NodeOutlier o;
    o.name = strata[i].name;
    o.others_mu_log = m->mu_log;
    o.diff_log = strata[i].mean_log - m->mu_log;
    o.z = o.diff_log / std::sqrt(strata[i].var_of_mean + m->tau2 + se2);
    o.p = 2 * boost::math::cdf(
                  boost::math::complement(boost::math::normal_distribution<>(), std::fabs(o.z)));
    o.p_bonferroni = std::min(1.0, o.p * static_cast<double>(k));
    o.outlier = o.p_bonferroni < alpha && std::fabs(o.diff_log) > band_log;
    out.push_back(o);
  }
  return out;
}

}  // namespace vouch
