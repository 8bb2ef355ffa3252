#include "stats/sequential.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

namespace vouch {
namespace {

// Simpson intervals across the continuation region (-c, c). The sub-densities are
// smooth, so 400 intervals give boundaries to ~1e-6.
constexpr int kGridIntervals = 400;

double Phi(double z) { return boost::math::cdf(boost::math::normal_distribution<double>(), z); }
double PhiUpper(double z) {
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), z));
}
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
    p += g.weighted[j] * (Phi((-c - r * g.z[j]) / s) + PhiUpper((c - r * g.z[j]) / s));
  }
  return p;
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
      return 2 * (2 * PhiUpper(ZQuantileUpper(alpha / 4) / std::sqrt(t)));
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
      plan.pairs_per_look < 1 || !(plan.confidence > 0 && plan.confidence < 1)) {
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
  for (double z : design.boundary_z) design.nominal_alpha.push_back(2 * PhiUpper(z));
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
