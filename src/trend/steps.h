// Step detection over a metric's series (one point per commit, day or run).
//
// The method is E-Divisive with means (Matteson and James, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", JASA 109(505), 2014), in the form
// MongoDB runs over its CI performance results (Daly et al., "The Use of Change Point
// Detection to Identify Software Performance Regressions in a Continuous Integration
// System", ICPE 2020; github.com/mongodb/signal-processing-algorithms) and that Apache
// Otava (formerly Hunter; Fleming et al., ICPE 2023) inherits:
//  - for a segment Z and a split tau into X = Z[0, tau) and Y = Z[tau, n), the energy
//    statistic q(tau) = tau m / n * (2/(tau m) sum|x - y| - sum_{i<k}|x_i - x_k| / C(tau, 2)
//    - sum_{j<k}|y_j - y_k| / C(m, 2)) with m = n - tau and exponent alpha = 1 (kappa fixed
//    at the segment's end, as MongoDB does);
//  - the best split of every segment is found; the largest is tested by a permutation test
//    (the segment shuffled R times; p = (#{q_perm >= q} + 1) / (R + 1)), and kept when p is at
//    most the significance level; the segment splits and the search repeats (hierarchical).
// The sums are kept incrementally with a Fenwick tree over the values' ranks, so one scan
// of a segment is O(n log n) instead of the paper's O(n^2) distance matrix.
//
// Short segments (fewer than parametric_below points, 30 by default) are tested otherwise: a
// permutation test of n points cannot reach p <= 0.01 at all when the step leaves k points on
// one side and 2 / C(n, k) > 0.01 (10 points, 3 after the step: 2/120 = 0.017), and with 199
// shuffles even a perfect 5 | 5 cliff gives p = 0.010-0.015 (issue 37: a 9 % drop in 10 points
// at 2 % noise was "none found"). There the split is the one of largest |t| (two-sample t with
// pooled variance: the likelihood ratio of one shift in the mean under Gaussian noise), and its
// p is the two-sided t p (n - 2 degrees of freedom) times the number of splits it was picked
// from (Bonferroni), so the false-step rate stays at most the significance level under Gaussian
// noise whatever split is picked. bench/trend/trend_bench.cc measures power and false steps.
// A failed short segment is set aside and the search goes on with the others.
//
// Constants: 199 permutations (the ecp R package's default; the smallest p it can give is
// 0.005), significance 0.01 (stricter than ecp's 0.05: a trend is scanned after every
// commit, and a false step costs someone an afternoon), at least 3 points on each side of a
// step. The permutations use a fixed seed: the same series always gives the same steps.
//
// Long series (more than exact_max_points, 1,000 by default) are searched window by window,
// the form Apache Otava uses so that a search costs the same per appended point however long
// the series grows (StepTracker below): E-divisive as above inside windows of `window` points
// that start every window/2 points (so every step lies at least window/4 points from the edge
// of some window), then the windows' candidates are merged and each is tested against its
// neighbours with Welch's t-test on the whole segments between candidates, dropping the least
// significant until every one is at most the significance level (backward elimination).
// Each survivor then moves to the best split of the segment between its neighbours, and the
// test runs again. A step's p_value is Welch's times the number of splits of that segment
// (Bonferroni: its place was picked among them), not the permutation test's.
//
// A simple reference method sits beside it for the benchmark (bench/store): a fixed
// threshold on the ratio of the medians of the W points after and before each point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vouch {

struct EDivisiveOptions {
  int permutations = 199;
  double significance = 0.01;
  int min_segment = 3;
  std::uint64_t seed = 1;
  int max_steps = 32;
  int exact_max_points = 1000;  // longer series: StepTracker's windows
  int window = 256;
  int parametric_below = 30;  // segments shorter than this: the t rule above (0: never)
};

struct ChangePoint {
  int index = 0;       // the first point after the step
  double q = 0;        // the energy statistic at the split
  double p_value = 1;  // permutation test, or the t rule's Bonferroni p (short segments)
};

// The t rule of a short segment Z (see above): the split of largest pooled two-sample |t| with
// at least MIN_SEGMENT points on each side, and its Bonferroni p. {-1, 1} when Z is too short.
std::pair<int, double> BestSplitT(const std::vector<double>& z, int min_segment);

// The fewest points in which EDivisive can find a step at all. With the t rule for short
// segments (parametric_below > 2 min_segment): 2 min_segment (6 at the defaults). Without it,
// below it even a perfect cliff
// in the middle cannot reach OPTIONS.significance, because a shuffle of n points gives the
// same split (or its mirror) with probability 2 / C(n, n/2) (8 points: 2/70 = 0.029 > 0.01),
// and the permutation test's p is never below 1 / (permutations + 1). At the defaults: 10.
int MinStepSeriesLength(const EDivisiveOptions& options = {});

// Change points of SERIES in increasing index order.
std::vector<ChangePoint> EDivisive(const std::vector<double>& series,
                                   const EDivisiveOptions& options = {});

// The steps of a series that grows one point at a time (Apache Otava's incremental form, see
// above). Append costs O(window log window) amortised, whatever the series' length: a window is
// searched every window/2 points, with its own seed, so the steps never depend on how the
// points arrived (appended one by one or all at once). Steps() adds the last points' window and
// merges: O(window log window + k^2) for k candidates.
class StepTracker {
 public:
  explicit StepTracker(const EDivisiveOptions& options = {});
  void Append(double value);
  std::vector<ChangePoint> Steps() const;
  size_t size() const { return values_.size(); }

 private:
  void SearchWindow(size_t begin, size_t end, std::vector<ChangePoint>* out) const;
  EDivisiveOptions o_;
  size_t window_, hop_;
  std::vector<double> values_;
  // Prefix sums of (value - first value) and of its square, for the merge's t-tests.
  std::vector<double> sum_ = {0}, sq_ = {0};
  std::vector<ChangePoint> candidates_;  // of the full windows searched so far
  bool finite_ = true;
};

// The energy statistic q(tau) of every split of SERIES (0 where a side is shorter than
// MIN_SEGMENT); exposed for tests against the direct O(n^2) formula.
std::vector<double> EnergyStatistics(const std::vector<double>& series, int min_segment);

struct MovingMedianOptions {
  int window = 5;              // points on each side
  double threshold_pct = 2.0;  // |median after / median before - 1| beyond this is a step
};

// The reference rule: indices where the ratio of the medians of the WINDOW points from i on
// and the WINDOW points before i is beyond the threshold; each run of such indices gives its
// largest one.
std::vector<int> MovingMedianSteps(const std::vector<double>& series,
                                   const MovingMedianOptions& options = {});

}  // namespace vouch
