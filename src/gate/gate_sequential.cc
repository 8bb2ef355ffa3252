#include "gate/gate_sequential.h"

#include <algorithm>
#include <atomic>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>
#include <tuple>

#include "gate/noise.h"
#include "stats/sequential.h"
#include "stats/welch.h"

namespace vouch {
namespace {

// The share of alpha a fixed baseline's levels are held under it, and the most p values
// (paths times looks) its calibration keeps.
constexpr double kHoldShare = 0.03;
constexpr std::size_t kMaxCalibrationValues = std::size_t{32} << 20;
constexpr std::size_t kChunks = 64;
constexpr unsigned kCalibrationThreads = 8;

// The one-sided Welch p value at each look of one path's legs (sigma times standard normals)
// against a baseline of mean MB over M trials and variance VB over its first M1: into P.
void LookPValues(std::mt19937_64& rng, std::normal_distribution<double>& normal, double sigma,
                 const std::vector<std::size_t>& look_legs, double mb, double vb, std::size_t m,
                 std::size_t m1, float* p) {
  double s = 0, ss = 0;
  std::size_t n = 0;
  for (std::size_t k = 0; k < look_legs.size(); ++k) {
    for (; n < look_legs[k]; ++n) {
      const double x = sigma * normal(rng);
      s += x;
      ss += x * x;
    }
    const double nn = static_cast<double>(n), mn = s / nn;
    const double vn = std::max((ss - nn * mn * mn) / (nn - 1), 1e-300);
    p[k] = static_cast<float>(
        WelchUpperP(Welch({mb, vb, static_cast<double>(m), m1 - 1.0}, {mn, vn, nn, nn - 1})));
  }
}

// The largest lambda <= START whose LEVEL (the share of paths crossing) is at most ALPHA:
// START itself when it already is, else bisected (25 steps).
template <typename Level>
double BisectScale(const Level& level, double alpha, double start) {
  if (level(start) <= alpha) return start;
  double lo = 0.5 * start, hi = start;
  while (level(lo) > alpha && lo > 1e-6) lo /= 2;
  for (int i = 0; i < 25; ++i) {
    const double mid = 0.5 * (lo + hi);
    (level(mid) > alpha ? hi : lo) = mid;
  }
  return lo;
}

// The levels of the looks for a baseline that could not grow, found on the Welch statistic
// itself (issue 34 item 4): the one-sided Welch p value of each look of `paths` seeded null
// paths (equal variances, no change; the statistic is free of the mean and sigma), then, look
// by look, the level under which the paths not yet crossed cross so that the share crossed by
// look k is the spending function's alpha(t_k). Exact for the statistic the gate computes,
// where one scale for every look (the growth rule's lambda, below) pays the first looks' few
// degrees of freedom at every look: unchanged code at 2 % noise and a 3 % threshold, a baseline
// of 8 trials and looks at 3 to 15 legs, was inconclusive 7.8 % with one scale.
// The total held is the spending's alpha less kHoldShare of it (0.15 points at 5 %), or less
// 2.5 standard errors of the calibration's own Monte Carlo error where that is more (paths
// are capped so that their p values fit in 128 MB: a design of many looks draws fewer).
// Held 2.5 standard errors under alpha on 100,000 paths (0.17 points), the FAIL rate at
// exactly the threshold was 4.93 % and 4.92 % in 100,000 simulated gates a direction (upper
// 95 % bounds 5.04 % and 5.03 %): the calibration's own error (0.07 points) moved the rate as
// much as the margin allowed. On 400,000 paths held 0.15 points under (4.3 standard errors):
// 4.85 % and 4.86 % in 400,000 a direction (upper 4.91 % and 4.92 %), unchanged code at 2 %
// noise inconclusive 7.99 % (docs/BENCHMARKS.md, "Stop 45").
// A[k]: the spending's cumulative one-sided alpha by look k.
std::vector<double> ComputeLevelsByLook(const GateSequentialDesign& d,
                                        const std::vector<double>& a) {
  const std::size_t looks = d.look_legs.size();
  const std::size_t paths =
      std::min(d.plan.level_paths, std::max<std::size_t>(100000, kMaxCalibrationValues / looks));
  const std::size_t m = d.plan.baseline_trials;
  const std::size_t m1 = d.plan.baseline_spread_trials >= 2 && d.plan.baseline_spread_trials < m
                             ? d.plan.baseline_spread_trials
                             : m;
  // The paths in kChunks fixed chunks, each its own seeded stream, drawn by up to
  // kCalibrationThreads threads: the levels do not depend on how many threads drew them.
  std::vector<float> p(paths * looks);
  auto draw = [&](std::size_t chunk) {
    std::seed_seq seq{static_cast<std::uint32_t>(d.plan.calibration_seed),
                      static_cast<std::uint32_t>(d.plan.calibration_seed >> 32),
                      static_cast<std::uint32_t>(chunk)};
    std::mt19937_64 rng(seq);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t i = paths * chunk / kChunks; i < paths * (chunk + 1) / kChunks; ++i) {
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
      LookPValues(rng, normal, 1.0, d.look_legs, bs / static_cast<double>(m), vb, m, m1,
                  &p[i * looks]);
    }
  };
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t c; (c = next.fetch_add(1)) < kChunks;) draw(c);
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, kCalibrationThreads);
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: this one draws the rest
    }
  }
  work();
  for (auto& t : pool) t.join();
  const double n = static_cast<double>(paths);
  const double se = std::sqrt(d.plan.alpha * (1 - d.plan.alpha) / n);
  const double hold = d.plan.alpha - std::max(kHoldShare * d.plan.alpha, 2.5 * se);
  std::vector<double> levels(looks, 0.0);
  std::vector<char> crossed(paths, 0);
  std::vector<float> alive;
  std::size_t done = 0;
  for (std::size_t k = 0; k < looks; ++k) {
    alive.clear();
    for (std::size_t i = 0; i < paths; ++i)
      if (!crossed[i]) alive.push_back(p[i * looks + k]);
    const auto want = static_cast<std::size_t>(std::floor(hold * a[k] / d.plan.alpha * n));
    const std::size_t cross = std::min(want > done ? want - done : 0, alive.size());
    // The level sits between the last path that crosses and the first that does not; with
    // none to cross, under every path's p value (a look that cannot stop the gate). The two
    // order statistics by selection, not a sort.
    const auto at = alive.begin() + static_cast<std::ptrdiff_t>(cross);
    if (at != alive.end()) std::nth_element(alive.begin(), at, alive.end());
    const double below = cross > 0 ? *std::max_element(alive.begin(), at) : 0.0;
    const double above = at != alive.end() ? *at : 1.0;
    levels[k] = cross > 0 ? 0.5 * (below + above) : 0.5 * above;
    // A gate stops at its first verdict: a path whose interval passes at this look (its upper
    // end under the threshold, p >= 1 - level) cannot fail later, so it leaves the paths the
    // later looks are calibrated on, as one that fails does.
    for (std::size_t i = 0; i < paths; ++i) {
      if (crossed[i]) continue;
      const float pk = p[i * looks + k];
      if (pk <= levels[k]) crossed[i] = 1, ++done;
      if (pk >= 1 - levels[k]) crossed[i] = 2;
    }
  }
  return levels;
}

// GateLevelsByLook, cached per design (the calibration is the costly part: a gate, its RECORD
// and the bench's simulated gates ask for the same design).
std::vector<double> GateLevelsByLook(const GateSequentialDesign& d, const std::vector<double>& a) {
  using Key = std::tuple<std::vector<std::size_t>, std::vector<double>, std::size_t, std::size_t,
                         double, std::size_t, std::uint64_t>;
  Key key{d.look_legs,
          a,
          d.plan.baseline_trials,
          d.plan.baseline_spread_trials,
          d.plan.alpha,
          d.plan.level_paths,
          d.plan.calibration_seed};
  static std::mutex mu;
  static std::map<Key, std::vector<double>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto levels = ComputeLevelsByLook(d, a);
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(std::move(key), levels);
  return levels;
}

// The baseline's first stage: the trials its spread is taken from.
std::size_t FirstStage(const GateSequentialPlan& plan) {
  const std::size_t m = plan.baseline_trials, m1 = plan.baseline_spread_trials;
  return m1 >= 2 && m1 < m ? m1 : m;
}

// The one-sided level of each look for a baseline of M trials: the Lan-DeMets boundary on the
// information I(n) = 1/(1/m + 1/n) (header), before the small-sample scale. Z: c_k, if wanted.
std::optional<std::vector<double>> LookLevels(const GateSequentialPlan& plan,
                                              const std::vector<std::size_t>& look_legs,
                                              std::size_t m, std::vector<double>* z = nullptr) {
  auto info = [&](std::size_t n) {
    return 1.0 / (1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n));
  };
  std::vector<double> t;
  for (std::size_t n : look_legs) t.push_back(info(n) / info(plan.max_legs));
  auto c = SpendingBoundaries(t, 2 * plan.alpha, plan.spending);
  if (!c) return std::nullopt;
  std::vector<double> a;
  for (double x : *c) a.push_back(NormalUpper(x));
  if (z) *z = *c;
  return a;
}

// The smallest lambda that keeps paths of `baseline --max-trials` and the looks at alpha, over a
// grid of noise-to-threshold ratios (header). Each path draws the first stage, grows it as
// BaselineTrialsToResolve would (the trials k that resolve the threshold: sd <= tau / ((t_{2k-2}
// + z_power) sqrt(2/k)), Resolves in gate/noise.cc), takes the spread from the first stage
// (Stein) and the mean from all trials, then the legs look by look with the levels of the
// realised trials. Cached per plan: the bench's simulated gates ask for the same plan often.
std::optional<double> GrowthScale(const GateSequentialPlan& plan,
                                  const std::vector<std::size_t>& look_legs) {
  const std::size_t m1 = FirstStage(plan), top = std::max(plan.baseline_growth_max, m1);
  using Key = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, double,
                         int, std::size_t, std::uint64_t>;
  const Key key{m1,
                top,
                plan.first_legs,
                plan.legs_per_look,
                plan.max_legs,
                plan.alpha,
                static_cast<int>(plan.spending),
                plan.calibration_paths,
                plan.calibration_seed};
  static std::mutex mu;
  static std::map<Key, double> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::vector<std::vector<double>> levels(top + 1);
  for (std::size_t m = m1; m <= top; ++m) {
    auto a = LookLevels(plan, look_legs, m);
    if (!a) return std::nullopt;
    levels[m] = *a;
  }
  // cutoff[k]: the largest spread (in units of the threshold's log) that k trials resolve.
  const double z_power =
      boost::math::quantile(boost::math::normal_distribution<double>(), kGateResolutionPower);
  std::vector<double> cutoff(top + 1, 0.0);
  for (std::size_t k = 2; k <= top; ++k)
    cutoff[k] = 1.0 / ((StudentTQuantile(2.0 * k - 2, 1 - plan.alpha) + z_power) *
                       std::sqrt(2.0 / static_cast<double>(k)));
  auto grown_to = [&](double sd) {
    for (std::size_t k = 2; k <= top; ++k)
      if (sd <= cutoff[k]) return std::max(m1, k);
    return top;
  };
  const std::vector<double> ratios = {0.1, 0.2, 0.3,  0.4, 0.5, 0.6, 0.7,
                                      0.8, 1.0, 1.25, 1.5, 2.0, 3.0};
  const std::size_t looks = look_legs.size();
  const std::size_t paths = std::max<std::size_t>(2000, plan.calibration_paths / 20);
  std::mt19937_64 rng(plan.calibration_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  double lambda_min = 1.0;
  std::vector<float> p(paths * looks);
  std::vector<std::size_t> trials(paths);
  for (double sigma : ratios) {
    for (std::size_t i = 0; i < paths; ++i) {
      double bs = 0, bss = 0;
      for (std::size_t j = 0; j < m1; ++j) {
        const double x = sigma * normal(rng);
        bs += x;
        bss += x * x;
      }
      const double n1 = static_cast<double>(m1), mean1 = bs / n1;
      const double vb = std::max((bss - n1 * mean1 * mean1) / (n1 - 1), 1e-300);
      const std::size_t m = grown_to(std::sqrt(vb));
      for (std::size_t j = m1; j < m; ++j) bs += sigma * normal(rng);
      trials[i] = m;
      LookPValues(rng, normal, sigma, look_legs, bs / static_cast<double>(m), vb, m, m1,
                  &p[i * looks]);
    }
    auto level = [&](double lambda) {
      std::size_t crossed = 0;
      for (std::size_t i = 0; i < paths; ++i)
        for (std::size_t k = 0; k < looks; ++k)
          if (p[i * looks + k] <= lambda * levels[trials[i]][k]) {
            ++crossed;
            break;
          }
      return static_cast<double>(crossed) / static_cast<double>(paths);
    };
    lambda_min = BisectScale(level, plan.alpha, lambda_min);
  }
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, lambda_min);
  return lambda_min;
}

}  // namespace

std::optional<GateSequentialDesign> MakeGateSequentialDesign(const GateSequentialPlan& plan) {
  if (plan.first_legs < 2 || plan.first_legs > plan.max_legs || plan.legs_per_look < 1 ||
      plan.baseline_trials < 2 || plan.baseline_spread_trials > plan.baseline_trials ||
      !(plan.alpha > 0 && plan.alpha < 0.5) || plan.level_paths < 1000 ||
      (plan.max_legs - plan.first_legs) / plan.legs_per_look + 1 > 200)
    return std::nullopt;
  GateSequentialDesign d;
  d.plan = plan;
  for (std::size_t n = plan.first_legs; n < plan.max_legs; n += plan.legs_per_look)
    d.look_legs.push_back(n);
  d.look_legs.push_back(plan.max_legs);
  auto a = LookLevels(plan, d.look_legs, plan.baseline_trials, &d.boundary_z);
  if (!a) return std::nullopt;
  if (plan.calibration_paths == 0) {
    d.small_sample_scale = 1.0;
  } else if (plan.baseline_growth_max > FirstStage(plan)) {
    auto lambda = GrowthScale(plan, d.look_legs);
    if (!lambda) return std::nullopt;
    d.small_sample_scale = *lambda;
  } else {
    std::vector<double> spent;  // the cumulative one-sided alpha by each look
    for (std::size_t n : d.look_legs) {
      const double i =
          1.0 / (1.0 / static_cast<double>(plan.baseline_trials) + 1.0 / static_cast<double>(n));
      const double i_max = 1.0 / (1.0 / static_cast<double>(plan.baseline_trials) +
                                  1.0 / static_cast<double>(plan.max_legs));
      spent.push_back(AlphaSpent(plan.spending, 2 * plan.alpha, i / i_max) / 2);
    }
    d.nominal_alpha = GateLevelsByLook(d, spent);
    d.small_sample_scale = d.nominal_alpha.back() / a->back();
    return d;
  }
  for (double x : *a) d.nominal_alpha.push_back(d.small_sample_scale * x);
  return d;
}

std::optional<GateSequentialDesign> GateDesignFor(const Baseline& base, std::size_t reps,
                                                  std::size_t max_reps, std::size_t look_every,
                                                  double alpha, bool* unusable,
                                                  SpendingFunction spending) {
  if (unusable) *unusable = false;
  const bool sequential = max_reps > reps;
  std::size_t m = 0;  // the fewest trials a metric that can fail has
  for (const auto& bm : base.metrics)
    if (bm.fail_pct && bm.trials.size() >= 2)
      m = m ? std::min(m, bm.trials.size()) : bm.trials.size();
  const std::size_t top = static_cast<std::size_t>(std::max(0, base.max_trials));
  if (!sequential && !(m >= 2 && top > 0)) return std::nullopt;
  GateSequentialPlan plan;
  plan.baseline_trials = m;
  if (base.first_stage_trials > 0 && static_cast<std::size_t>(base.first_stage_trials) < m)
    plan.baseline_spread_trials = static_cast<std::size_t>(base.first_stage_trials);
  plan.baseline_growth_max = top;
  plan.first_legs = reps;
  plan.legs_per_look = std::max<std::size_t>(1, look_every ? look_every : reps);
  plan.max_legs = sequential ? max_reps : reps;
  plan.alpha = alpha;
  plan.spending = spending;
  auto d = MakeGateSequentialDesign(plan);
  if (!d && sequential && unusable) *unusable = true;
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
