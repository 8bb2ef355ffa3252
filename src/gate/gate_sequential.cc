#include "gate/gate_sequential.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <random>

#include "stats/sequential.h"
#include "stats/welch.h"

namespace vouch {
namespace {

double PhiUpper(double z) {
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), z));
}

// The one-sided Welch p value of each look of `paths` seeded null paths (equal variances,
// no change), then lambda bisected so that the share of paths with any p_k <= lambda a_k is
// alpha. Only ever tightens (lambda <= 1).
double GateSmallSampleScale(const GateSequentialDesign& d, const std::vector<double>& a) {
  const std::size_t looks = d.look_legs.size(), paths = d.plan.calibration_paths;
  const std::size_t m = d.plan.baseline_trials;
  const std::size_t m1 = d.plan.baseline_spread_trials >= 2 && d.plan.baseline_spread_trials < m
                             ? d.plan.baseline_spread_trials
                             : m;
  std::vector<float> p(paths * looks);
  std::mt19937_64 rng(d.plan.calibration_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < paths; ++i) {
    // The baseline: its mean over all m trials, its variance over the first m1 (Stein).
    double bs = 0, bss = 0, vb = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const double x = normal(rng);
      bs += x;
      bss += x * x;
      if (j + 1 == m1) {
        const double mean1 = bs / static_cast<double>(m1);
        vb = std::max((bss - static_cast<double>(m1) * mean1 * mean1) / (m1 - 1.0), 1e-300);
      }
    }
    const double mb = bs / static_cast<double>(m);
    double s = 0, ss = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < looks; ++k) {
      for (; n < d.look_legs[k]; ++n) {
        const double x = normal(rng);
        s += x;
        ss += x * x;
      }
      const double nn = static_cast<double>(n), mn = s / nn;
      const double vn = std::max((ss - nn * mn * mn) / (nn - 1), 1e-300);
      const WelchT w = Welch({mb, vb, static_cast<double>(m), m1 - 1.0}, {mn, vn, nn, nn - 1});
      p[i * looks + k] = static_cast<float>(StudentTUpper(w.df, w.t));
    }
  }
  auto level = [&](double lambda) {
    std::size_t crossed = 0;
    for (std::size_t i = 0; i < paths; ++i)
      for (std::size_t k = 0; k < looks; ++k)
        if (p[i * looks + k] <= lambda * a[k]) {
          ++crossed;
          break;
        }
    return static_cast<double>(crossed) / static_cast<double>(paths);
  };
  const double alpha = d.plan.alpha;
  if (level(1.0) <= alpha) return 1.0;
  double lo = 0.5, hi = 1.0;
  while (level(lo) > alpha && lo > 1e-6) lo /= 2;
  for (int i = 0; i < 25; ++i) {
    const double mid = 0.5 * (lo + hi);
    (level(mid) > alpha ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace

std::optional<GateSequentialDesign> MakeGateSequentialDesign(const GateSequentialPlan& plan) {
  if (plan.first_legs < 2 || plan.first_legs > plan.max_legs || plan.legs_per_look < 1 ||
      plan.baseline_trials < 2 || plan.baseline_spread_trials > plan.baseline_trials ||
      !(plan.alpha > 0 && plan.alpha < 0.5) ||
      (plan.max_legs - plan.first_legs) / plan.legs_per_look + 1 > 200)
    return std::nullopt;
  GateSequentialDesign d;
  d.plan = plan;
  for (std::size_t n = plan.first_legs; n < plan.max_legs; n += plan.legs_per_look)
    d.look_legs.push_back(n);
  d.look_legs.push_back(plan.max_legs);
  const double m = static_cast<double>(plan.baseline_trials);
  auto info = [&](std::size_t n) { return 1.0 / (1.0 / m + 1.0 / static_cast<double>(n)); };
  std::vector<double> t;
  for (std::size_t n : d.look_legs) t.push_back(info(n) / info(plan.max_legs));
  auto c = SpendingBoundaries(t, 2 * plan.alpha, plan.spending);
  if (!c) return std::nullopt;
  d.boundary_z = *c;
  std::vector<double> a;
  for (double z : d.boundary_z) a.push_back(PhiUpper(z));
  d.small_sample_scale = plan.calibration_paths > 0 ? GateSmallSampleScale(d, a) : 1.0;
  for (double x : a) d.nominal_alpha.push_back(d.small_sample_scale * x);
  return d;
}

std::size_t GateLookAt(const GateSequentialDesign& design, std::size_t legs) {
  std::size_t look = 0;
  for (std::size_t k = 0; k < design.look_legs.size(); ++k)
    if (design.look_legs[k] <= legs) look = k + 1;
  return look;
}

std::size_t BaselineTrialsToResolve(const Baseline& base, std::size_t max_trials) {
  int can_fail = 0;
  for (const auto& m : base.metrics) can_fail += m.fail_pct ? 1 : 0;
  const double alpha = kGateFalseFailRate / std::max(1, can_fail);
  std::size_t have = 0, want = 0;
  for (const auto& m : base.metrics) {
    have = std::max(have, m.trials.size());
    if (!m.fail_pct) continue;
    auto sd = SdOfLogs(m.trials);
    if (!sd) continue;
    auto need = TrialsToResolve(*sd, *m.fail_pct, alpha);
    want = std::max(want, need ? static_cast<std::size_t>(*need) : max_trials);
  }
  return std::max(have, std::min(want, max_trials));
}

}  // namespace vouch
