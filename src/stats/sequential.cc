#include "stats/sequential.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numbers>
#include <random>

namespace vouch {

double NormalUpper(double z) {
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), z));
}

namespace {

// Simpson intervals across the continuation region (-c, c). The sub-densities are
// smooth, so 400 intervals give boundaries to ~1e-6.
constexpr int kGridIntervals = 400;

double Phi(double z) { return boost::math::cdf(boost::math::normal_distribution<double>(), z); }
double PhiDensity(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi); }
double ZQuantileUpper(double p) {
  return boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<double>(), p));
}

// The sub-density of Z at the previous look on the surviving region, on a Simpson grid.
struct Grid {
  std::vector<double> z;
  std::vector<double> weighted;  // Simpson weight * density
};

Grid MakeGrid(double c, const auto& density) {
  Grid g;
  c = std::min(c, 9.0);  // the density beyond |z| = 9 is below 1e-17
  const double h = 2 * c / kGridIntervals;
  for (int j = 0; j <= kGridIntervals; ++j) {
    const double z = -c + h * j;
    const double w = (j == 0 || j == kGridIntervals) ? 1.0 : (j % 2 == 1 ? 4.0 : 2.0);
    g.z.push_back(z);
    g.weighted.push_back(w * h / 3 * density(z));
  }
  return g;
}

// P(|Z_k| >= c and no earlier crossing), Z_k | z ~ N(r z, s^2).
double ExitProbability(const Grid& g, double r, double s, double c) {
  double p = 0;
  for (std::size_t j = 0; j < g.z.size(); ++j) {
    p += g.weighted[j] * (Phi((-c - r * g.z[j]) / s) + NormalUpper((c - r * g.z[j]) / s));
  }
  return p;
}

// The factor lambda <= 1 on the per-look levels that makes the simulated overall level of
// the t intervals equal alpha (see the header). |t| at every look of every path is kept
// (paths x looks floats, 2.8 MB with the defaults), then the level is bisected with the
// same paths, so the search is monotone and deterministic.
double SmallSampleScale(const std::vector<std::size_t>& look_pairs,
                        const std::vector<double>& z_alpha, double alpha, std::size_t paths,
                        std::uint64_t seed) {
  const std::size_t looks = look_pairs.size();
  // Bound the table at ~16 MB for plans with many looks; the level's Monte Carlo error
  // then grows to at most ~0.2 points (10000 paths).
  paths = std::min(paths, std::max<std::size_t>(10000, 4'000'000 / looks));
  std::vector<float> abs_t(paths * looks);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t p = 0; p < paths; ++p) {
    double sum = 0;
    double sum_sq = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < looks; ++k) {
      for (; n < look_pairs[k]; ++n) {
        const double x = normal(rng);
        sum += x;
        sum_sq += x * x;
      }
      const double nn = static_cast<double>(n);
      const double mean = sum / nn;
      const double var = std::max((sum_sq - nn * mean * mean) / (nn - 1), 1e-300);
      abs_t[p * looks + k] = static_cast<float>(std::fabs(mean) / std::sqrt(var / nn));
    }
  }
  auto level = [&](double lambda) {
    std::vector<double> crit(looks);
    for (std::size_t k = 0; k < looks; ++k) {
      const double a = std::max(lambda * z_alpha[k], 1e-12);
      crit[k] = boost::math::quantile(boost::math::complement(
          boost::math::students_t_distribution<double>(static_cast<double>(look_pairs[k] - 1)),
          a / 2));
    }
    std::size_t crossed = 0;
    for (std::size_t p = 0; p < paths; ++p) {
      for (std::size_t k = 0; k < looks; ++k) {
        if (abs_t[p * looks + k] >= crit[k]) {
          ++crossed;
          break;
        }
      }
    }
    return static_cast<double>(crossed) / static_cast<double>(paths);
  };
  // Only ever tighten: where the plain transfer already holds alpha, keep it.
  if (level(1.0) <= alpha) return 1.0;
  double lo = 0.5;
  double hi = 1.0;
  while (level(lo) > alpha) lo /= 2;
  for (int i = 0; i < 25; ++i) {
    const double mid = 0.5 * (lo + hi);
    (level(mid) > alpha ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace

double AlphaSpent(SpendingFunction spending, double alpha, double t) {
  if (t <= 0) return 0;
  t = std::min(t, 1.0);
  switch (spending) {
    case SpendingFunction::kOBrienFleming:
      // Each side spends alpha/2 by the one-sided O'Brien-Fleming-type function
      // 2 - 2 Phi(z_{1-(alpha/2)/2} / sqrt(t)); the symmetric two-sided form of R ldbounds
      // and gsDesign, whose published boundaries the tests check.
      return 2 * (2 * NormalUpper(ZQuantileUpper(alpha / 4) / std::sqrt(t)));
    case SpendingFunction::kPocock:
      return alpha * std::log(1 + (std::numbers::e - 1) * t);
  }
  return 0;
}

std::optional<std::vector<double>> SpendingBoundaries(std::span<const double> info_fractions,
                                                      double alpha, SpendingFunction spending) {
  if (!(alpha > 0 && alpha < 1) || info_fractions.empty()) return std::nullopt;
  double prev_t = 0;
  for (double t : info_fractions) {
    if (!(t > prev_t && t <= 1)) return std::nullopt;
    prev_t = t;
  }
  constexpr double kNoRejection = 40;  // a z no statistic reaches: nothing spent
  std::vector<double> c(info_fractions.size());
  c[0] = ZQuantileUpper(AlphaSpent(spending, alpha, info_fractions[0]) / 2);
  c[0] = std::min(c[0], kNoRejection);
  Grid grid = MakeGrid(c[0], PhiDensity);
  for (std::size_t k = 1; k < info_fractions.size(); ++k) {
    const double r = std::sqrt(info_fractions[k - 1] / info_fractions[k]);
    const double s = std::sqrt(1 - r * r);
    const double target = AlphaSpent(spending, alpha, info_fractions[k]) -
                          AlphaSpent(spending, alpha, info_fractions[k - 1]);
    if (!(target > 0) || ExitProbability(grid, r, s, kNoRejection) >= target) {
      c[k] = kNoRejection;
    } else {
      // Exit probability falls as c grows: bisect to 1e-10 in z.
      double lo = 0;
      double hi = kNoRejection;
      while (hi - lo > 1e-10) {
        const double mid = 0.5 * (lo + hi);
        (ExitProbability(grid, r, s, mid) > target ? lo : hi) = mid;
      }
      c[k] = 0.5 * (lo + hi);
    }
    if (k + 1 < info_fractions.size()) {
      const Grid& old = grid;
      grid = MakeGrid(c[k], [&](double y) {
        double f = 0;
        for (std::size_t j = 0; j < old.z.size(); ++j) {
          f += old.weighted[j] * PhiDensity((y - r * old.z[j]) / s) / s;
        }
        return f;
      });
    }
  }
  return c;
}

std::optional<SequentialDesign> MakeSequentialDesign(const SequentialPlan& plan) {
  if (plan.first_look_pairs < 2 || plan.first_look_pairs > plan.max_pairs ||
      plan.pairs_per_look < 1 || !(plan.confidence > 0 && plan.confidence < 1) ||
      (plan.max_pairs - plan.first_look_pairs) / plan.pairs_per_look + 1 > kMaxSequentialLooks) {
    return std::nullopt;
  }
  SequentialDesign design;
  design.plan = plan;
  for (std::size_t n = plan.first_look_pairs; n < plan.max_pairs; n += plan.pairs_per_look) {
    design.look_pairs.push_back(n);
  }
  design.look_pairs.push_back(plan.max_pairs);
  std::vector<double> t;
  for (std::size_t n : design.look_pairs) {
    t.push_back(static_cast<double>(n) / static_cast<double>(plan.max_pairs));
  }
  auto c = SpendingBoundaries(t, 1 - plan.confidence, plan.spending);
  if (!c) return std::nullopt;
  design.boundary_z = *c;
  std::vector<double> z_alpha;
  for (double z : design.boundary_z) z_alpha.push_back(2 * NormalUpper(z));
  design.small_sample_scale =
      plan.calibration_paths > 0 ? SmallSampleScale(design.look_pairs, z_alpha, 1 - plan.confidence,
                                                    plan.calibration_paths, plan.calibration_seed)
                                 : 1.0;
  for (double a : z_alpha) design.nominal_alpha.push_back(design.small_sample_scale * a);
  return design;
}

std::optional<SequentialStep> SequentialLook(std::span<const double> d, std::size_t look,
                                             const SequentialDesign& design, const NoiseBand& band,
                                             std::span<const std::string> invalid_pair_reasons) {
  if (look == 0 || look > design.look_pairs.size()) return std::nullopt;
  SequentialStep step;
  step.look = look;
  // A level below 1e-12 barely survives 1 - alpha in double; such a look (nothing spent)
  // gives an interval too wide to clear anything at any realistic n, as intended.
  const double alpha = std::max(design.nominal_alpha[look - 1], 1e-12);
  step.nominal_confidence = 1 - alpha;
  AbOptions options = design.plan.options;
  options.confidence = step.nominal_confidence;
  step.decision = DecideAb(d, band, options, invalid_pair_reasons);
  const bool last = look == design.look_pairs.size() || d.size() >= design.plan.max_pairs;
  const AbVerdict v = step.decision.verdict;
  step.stop =
      last || v == AbVerdict::kBFaster || v == AbVerdict::kBSlower || v == AbVerdict::kNoChange;
  return step;
}

std::optional<SequentialStep> SequentialLook(std::span<const double> d, std::size_t look,
                                             std::size_t max_pairs, const NoiseBand& band) {
  SequentialPlan plan;
  plan.max_pairs = max_pairs;
  const auto design = MakeSequentialDesign(plan);
  if (!design) return std::nullopt;
  return SequentialLook(d, look, *design, band);
}

}  // namespace vouch
