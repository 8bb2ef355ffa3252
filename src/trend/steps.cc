#include "trend/steps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>

#include "stats/welch.h"

namespace vouch {
namespace {

// Counts and sums over ranks 0..n-1 (Fenwick / binary indexed tree).
class Fenwick {
 public:
  explicit Fenwick(size_t n) : cnt_(n + 1, 0), sum_(n + 1, 0.0) {}
  void Reset() {
    std::fill(cnt_.begin(), cnt_.end(), 0u);
    std::fill(sum_.begin(), sum_.end(), 0.0);
  }
  void Add(size_t rank, double v) {
    for (size_t i = rank + 1; i < cnt_.size(); i += i & (~i + 1)) {
      cnt_[i] += 1;
      sum_[i] += v;
    }
  }
  // Count and sum of ranks < RANK.
  std::pair<double, double> Below(size_t rank) const {
    std::uint32_t c = 0;
    double s = 0;
    for (size_t i = rank; i > 0; i -= i & (~i + 1)) {
      c += cnt_[i];
      s += sum_[i];
    }
    return {static_cast<double>(c), s};
  }

 private:
  std::vector<std::uint32_t> cnt_;
  std::vector<double> sum_;
};

// What a segment's scan needs that does not depend on the order of its values: the values
// sorted, each rank's summed distance to all the others, and the all-pairs sum. A permutation
// of the segment has the same, so the permutation test computes them once, not per shuffle.
struct Ranked {
  std::vector<double> sorted;     // by value, ties in position order (a stable sort)
  std::vector<double> total;      // by rank: sum over all others of |z_j - z_rank|
  std::vector<size_t> tie_first;  // by rank: the first rank of its run of equal values
  bool ties = false;
  double all_pairs = 0;
};

// Ranks of Z (position -> rank, a stable sort) and its Ranked.
Ranked RankSegment(const std::vector<double>& z, std::vector<size_t>* rank) {
  const size_t n = z.size();
  Ranked k;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return z[a] < z[b]; });
  rank->assign(n, 0);
  k.sorted.resize(n);
  std::vector<double> pre(n + 1, 0.0);
  for (size_t p = 0; p < n; ++p) {
    (*rank)[order[p]] = p;
    k.sorted[p] = z[order[p]];
    pre[p + 1] = pre[p] + k.sorted[p];
  }
  k.total.resize(n);
  k.tie_first.resize(n);
  for (size_t p = 0; p < n; ++p) {
    double s = k.sorted[p];
    double below = static_cast<double>(p) * s - pre[p];
    double above = (pre[n] - pre[p + 1]) - static_cast<double>(n - p - 1) * s;
    k.total[p] = below + above;
    k.all_pairs += below;
    const bool tie = p > 0 && k.sorted[p - 1] == s;
    k.tie_first[p] = tie ? k.tie_first[p - 1] : p;
    k.ties = k.ties || tie;
  }
  return k;
}

// After a shuffle of RANK: equal values get their ranks back in position order, as a stable
// sort of the shuffled values would give them (so every sum below adds in the same order as
// sorting the shuffled segment afresh, and gives the same bits). NEXT is scratch.
void RestoreTieOrder(const Ranked& k, std::vector<size_t>* rank, std::vector<size_t>* next) {
  if (!k.ties) return;
  next->assign(k.tie_first.begin(), k.tie_first.end());
  for (auto& r : *rank) r = (*next)[k.tie_first[r]]++;
}

// q(tau) for every split of the segment whose positions have ranks RANK; returns the best
// (tau, q). Q, when given, receives them all.
std::pair<int, double> BestSplitRanked(const Ranked& k, const std::vector<size_t>& rank,
                                       int min_segment, Fenwick& tree, std::vector<double>* q) {
  const size_t n = rank.size();
  if (q) q->assign(n, 0.0);
  if (n < 2 * static_cast<size_t>(min_segment) || n < 4) return {-1, 0.0};
  tree.Reset();
  double a = 0, b = 0, c = k.all_pairs, inserted_sum = 0;
  int best = -1;
  double best_q = -std::numeric_limits<double>::infinity();
  const double nd = static_cast<double>(n);
  for (size_t t = 0; t + 1 < n; ++t) {
    const size_t r = rank[t];
    double x = k.sorted[r];
    auto [lo_c, lo_s] = tree.Below(r);
    double hi_c = static_cast<double>(t) - lo_c, hi_s = inserted_sum - lo_s;
    double rx = lo_c * x - lo_s + (hi_s - hi_c * x);
    double ry = k.total[r] - rx;
    b += rx;
    c -= ry;
    a += ry - rx;
    tree.Add(r, x);
    inserted_sum += x;
    size_t tau = t + 1, m = n - tau;
    if (tau < static_cast<size_t>(min_segment) || m < static_cast<size_t>(min_segment) || tau < 2 ||
        m < 2)
      continue;
    double td = static_cast<double>(tau), md = static_cast<double>(m);
    double e = 2 * a / (td * md) - 2 * b / (td * (td - 1)) - 2 * c / (md * (md - 1));
    double qv = td * md / nd * e;
    if (q) (*q)[tau] = qv;
    if (qv > best_q) {
      best_q = qv;
      best = static_cast<int>(tau);
    }
  }
  return {best, best < 0 ? 0.0 : best_q};
}

std::pair<int, double> BestSplit(const std::vector<double>& z, int min_segment,
                                 std::vector<double>* q) {
  std::vector<size_t> rank;
  const Ranked k = RankSegment(z, &rank);
  Fenwick tree(z.size());
  return BestSplitRanked(k, rank, min_segment, tree, q);
}

struct Segment {
  int begin = 0, end = 0;  // [begin, end)
  int split = -1;          // absolute index of the best split, -1 when none
  double q = 0;
};

Segment Scan(const std::vector<double>& s, int begin, int end, int min_segment) {
  Segment g{begin, end, -1, 0};
  std::vector<double> z(s.begin() + begin, s.begin() + end);
  auto [tau, q] = BestSplit(z, min_segment, nullptr);
  if (tau > 0) {
    g.split = begin + tau;
    g.q = q;
  }
  return g;
}

}  // namespace

std::pair<int, double> BestSplitT(const std::vector<double>& z, int min_segment) {
  const int n = static_cast<int>(z.size()), k = std::max(2, min_segment);
  if (n < 2 * k) return {-1, 1.0};
  // Shifted by the first value, so the sums of squares do not cancel at large magnitudes.
  std::vector<double> sum(static_cast<size_t>(n) + 1, 0.0), sq(static_cast<size_t>(n) + 1, 0.0);
  for (int i = 0; i < n; ++i) {
    const double d = z[static_cast<size_t>(i)] - z[0];
    sum[static_cast<size_t>(i) + 1] = sum[static_cast<size_t>(i)] + d;
    sq[static_cast<size_t>(i) + 1] = sq[static_cast<size_t>(i)] + d * d;
  }
  auto ss = [&](int from, int to) {  // sum of squared deviations from the mean of [from, to)
    const double c = to - from, s1 = sum[static_cast<size_t>(to)] - sum[static_cast<size_t>(from)];
    return std::max(0.0, sq[static_cast<size_t>(to)] - sq[static_cast<size_t>(from)] - s1 * s1 / c);
  };
  int best = -1;
  double best_t = -1;
  for (int tau = k; tau <= n - k; ++tau) {
    const double a = tau, b = n - tau;
    const double diff = (sum[static_cast<size_t>(n)] - sum[static_cast<size_t>(tau)]) / b -
                        sum[static_cast<size_t>(tau)] / a;
    const double var = (ss(0, tau) + ss(tau, n)) / (n - 2);
    double t;
    if (var > 0)
      t = std::fabs(diff) / std::sqrt(var * (1 / a + 1 / b));
    else  // two flat levels: a step when they differ, none when they do not
      t = diff != 0 ? std::numeric_limits<double>::infinity() : 0;
    if (t > best_t) {
      best_t = t;
      best = tau;
    }
  }
  if (best < 0) return {-1, 1.0};
  if (std::isinf(best_t)) return {best, 0.0};
  const double splits = n - 2 * k + 1;
  const double p = 2 * StudentTUpper(n - 2, best_t);
  return {best, std::min(1.0, splits * p)};
}

std::vector<double> EnergyStatistics(const std::vector<double>& series, int min_segment) {
  std::vector<double> q;
  (void)BestSplit(series, min_segment, &q);
  return q;
}

namespace {

// The hierarchical search over the whole of SERIES (no non-finite values), the permutation
// test's shuffles drawn from SEED.
std::vector<ChangePoint> ExactSearch(const std::vector<double>& series, const EDivisiveOptions& o,
                                     std::uint64_t seed) {
  std::vector<ChangePoint> out;
  const int n = static_cast<int>(series.size());
  const int min_seg = std::max(2, o.min_segment);
  std::mt19937_64 rng(seed);
  std::vector<Segment> segs = {Scan(series, 0, n, min_seg)};
  while (static_cast<int>(out.size()) < o.max_steps) {
    auto it = std::max_element(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) {
      if ((a.split < 0) != (b.split < 0)) return a.split < 0;
      return a.q < b.q;
    });
    if (it == segs.end() || it->split < 0) break;
    std::vector<double> z(series.begin() + it->begin, series.begin() + it->end);
    if (it->end - it->begin < o.parametric_below) {
      // A short segment: the t rule (steps.h). One that fails is set aside, not the search.
      auto [tau, p] = BestSplitT(z, min_seg);
      if (tau < 0 || p > o.significance) {
        it->split = -1;
        continue;
      }
      const int at = it->begin + tau;
      out.push_back({at, EnergyStatistics(z, min_seg)[static_cast<size_t>(tau)], p});
      Segment left = Scan(series, it->begin, at, min_seg);
      Segment right = Scan(series, at, it->end, min_seg);
      *it = left;
      segs.push_back(right);
      continue;
    }
    // Permutation test of the best split within its own segment. A shuffle moves the ranks,
    // not the values (std::shuffle swaps the same positions whatever the element type, so
    // the shuffled segment is the same as shuffling the values). It stops once p must exceed
    // the significance level: the search ends there whatever the remaining shuffles give.
    std::vector<size_t> rank, next;
    const Ranked k = RankSegment(z, &rank);
    Fenwick tree(z.size());
    int at_least = 0;
    for (int r = 0; r < o.permutations; ++r) {
      std::shuffle(rank.begin(), rank.end(), rng);
      RestoreTieOrder(k, &rank, &next);
      if (BestSplitRanked(k, rank, min_seg, tree, nullptr).second >= it->q) ++at_least;
      if ((at_least + 1.0) / (o.permutations + 1.0) > o.significance) break;
    }
    double p = (at_least + 1.0) / (o.permutations + 1.0);
    if (p > o.significance) break;
    out.push_back({it->split, it->q, p});
    Segment left = Scan(series, it->begin, it->split, min_seg);
    Segment right = Scan(series, it->split, it->end, min_seg);
    *it = left;
    segs.push_back(right);
  }
  std::sort(out.begin(), out.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return out;
}

}  // namespace

std::vector<ChangePoint> EDivisive(const std::vector<double>& series, const EDivisiveOptions& o) {
  double most = 0;
  for (double v : series) {
    if (!std::isfinite(v)) return {};  // no statistic over a non-finite value
    most = std::max(most, std::fabs(v));
  }
  // Values near DBL_MAX: their differences, sums and squares overflow to infinity (and
  // infinity less infinity is NaN), so the search saw no step, or one anywhere. Every
  // statistic here is unchanged by scaling the series (the energy statistic and the Welch t
  // scale with it, the permutation p and the split do not), so a series beyond 2^400 is
  // scaled by a power of two (exact) to 2^400 at most, and q scaled back (capped at DBL_MAX).
  int exponent = 0;
  if (most > std::ldexp(1.0, 400)) (void)std::frexp(most, &exponent);
  exponent = exponent > 400 ? exponent - 400 : 0;
  std::vector<double> scaled;
  if (exponent > 0) {
    scaled.reserve(series.size());
    for (double v : series) scaled.push_back(std::ldexp(v, -exponent));
  }
  const std::vector<double>& z = exponent > 0 ? scaled : series;
  std::vector<ChangePoint> out;
  if (static_cast<long>(z.size()) <= std::max(o.exact_max_points, 0)) {
    out = ExactSearch(z, o, o.seed);
  } else {
    StepTracker tracker(o);
    for (double v : z) tracker.Append(v);
    out = tracker.Steps();
  }
  if (exponent > 0)
    for (auto& c : out)
      c.q = std::min(std::ldexp(c.q, exponent), std::numeric_limits<double>::max());
  return out;
}

StepTracker::StepTracker(const EDivisiveOptions& options)
    : o_(options),
      window_(static_cast<size_t>(std::max(options.window, 4 * std::max(2, options.min_segment)))),
      hop_(window_ / 2) {}

void StepTracker::Append(double value) {
  if (!std::isfinite(value)) finite_ = false;
  values_.push_back(value);
  const double d = finite_ ? value - values_.front() : 0;
  sum_.push_back(sum_.back() + d);
  sq_.push_back(sq_.back() + d * d);
  const size_t n = values_.size();
  if (finite_ && n >= window_ && (n - window_) % hop_ == 0)
    SearchWindow(n - window_, n, &candidates_);
}

void StepTracker::SearchWindow(size_t begin, size_t end, std::vector<ChangePoint>* out) const {
  std::vector<double> z(values_.begin() + static_cast<long>(begin),
                        values_.begin() + static_cast<long>(end));
  // Each window its own seed, from its place: the same points give the same steps however
  // they were appended.
  for (ChangePoint c : ExactSearch(z, o_, o_.seed ^ (0x9e3779b97f4a7c15ULL * (begin + 1)))) {
    c.index += static_cast<int>(begin);
    out->push_back(c);
  }
}

std::vector<ChangePoint> StepTracker::Steps() const {
  const size_t n = values_.size();
  if (!finite_ || n == 0) return {};
  std::vector<ChangePoint> c = candidates_;
  // The last points' window, when no full window ended at the last point.
  if (n < window_ || (n - window_) % hop_ != 0) SearchWindow(n > window_ ? n - window_ : 0, n, &c);
  // One candidate per step: the windows overlap, so a step is usually found twice, at the same
  // index or one close by; of candidates nearer than min_segment the larger statistic stays.
  std::sort(c.begin(), c.end(), [](const ChangePoint& a, const ChangePoint& b) {
    return a.index != b.index ? a.index < b.index : a.q > b.q;
  });
  const int min_seg = std::max(2, o_.min_segment);
  auto keep_apart = [&](const std::vector<ChangePoint>& sorted) {
    std::vector<ChangePoint> kept;
    for (const auto& x : sorted) {
      if (!kept.empty() && x.index - kept.back().index < min_seg) {
        if (x.q > kept.back().q) kept.back() = x;
        continue;
      }
      kept.push_back(x);
    }
    return kept;
  };
  std::vector<ChangePoint> merged = keep_apart(c);
  // The two-sided unequal-variance t-test (stats/welch.h) of the segment before a candidate against
  // the segment after it (both up to the neighbouring candidates); the least significant goes while
  // one is above the level.
  auto welch_p = [&](size_t a, size_t m, size_t b) {
    auto moments = [&](size_t from, size_t to, double* mean, double* var) {
      const double k = static_cast<double>(to - from);
      const double s = sum_[to] - sum_[from], q = sq_[to] - sq_[from];
      *mean = s / k;
      *var = std::max(0.0, (q - s * s / k) / (k - 1));
    };
    double ma, va, mb, vb;
    moments(a, m, &ma, &va);
    moments(m, b, &mb, &vb);
    const double na = static_cast<double>(m - a), nb = static_cast<double>(b - m);
    return WelchTwoSidedP(Welch({ma, va, na, na - 1}, {mb, vb, nb, nb - 1}));
  };
  // A candidate's place was picked from the splits of its segment (by a window, or by the
  // move below), so its p is Welch's times the number of splits it could have been
  // (Bonferroni): the family's false-step rate stays at the level.
  auto adjusted_p = [&](size_t a, size_t m, size_t b) {
    const double splits = static_cast<double>(
        std::max<long>(1, static_cast<long>(b - a) - 2 * static_cast<long>(min_seg) + 1));
    return std::min(1.0, splits * welch_p(a, m, b));
  };
  auto eliminate = [&] {
    while (!merged.empty()) {
      size_t worst = 0;
      double worst_p = -1;
      for (size_t i = 0; i < merged.size(); ++i) {
        const size_t a = i == 0 ? 0 : static_cast<size_t>(merged[i - 1].index);
        const size_t b = i + 1 < merged.size() ? static_cast<size_t>(merged[i + 1].index) : n;
        merged[i].p_value = adjusted_p(a, static_cast<size_t>(merged[i].index), b);
        if (merged[i].p_value > worst_p) {
          worst_p = merged[i].p_value;
          worst = i;
        }
      }
      if (worst_p <= o_.significance) return;
      merged.erase(merged.begin() + static_cast<long>(worst));
    }
  };
  // A step a window saw only in part can survive at the wrong place: any split between two
  // levels separates them in part, and Welch's test over long segments then says so. Each
  // survivor moves to the best split (the energy statistic's) of the segment between its
  // neighbours, as the whole-series search would place it, and the test runs again; a few
  // rounds at most (O(n log n) in all: the segments partition the series).
  for (int round = 0;; ++round) {
    eliminate();
    if (round == 4) break;
    bool moved = false;
    for (size_t i = 0; i < merged.size(); ++i) {
      const size_t a = i == 0 ? 0 : static_cast<size_t>(merged[i - 1].index);
      const size_t b = i + 1 < merged.size() ? static_cast<size_t>(merged[i + 1].index) : n;
      const std::vector<double> z(values_.begin() + static_cast<long>(a),
                                  values_.begin() + static_cast<long>(b));
      auto [tau, q] = BestSplit(z, min_seg, nullptr);
      if (tau > 0 && static_cast<int>(a) + tau != merged[i].index) {
        merged[i].index = static_cast<int>(a) + tau;
        merged[i].q = q;
        moved = true;
      }
    }
    if (!moved) break;
    merged = keep_apart(merged);
  }
  // At most max_steps: the most significant.
  if (static_cast<int>(merged.size()) > o_.max_steps) {
    std::stable_sort(merged.begin(), merged.end(), [](const ChangePoint& a, const ChangePoint& b) {
      return a.p_value < b.p_value;
    });
    merged.resize(static_cast<size_t>(std::max(o_.max_steps, 0)));
    std::sort(merged.begin(), merged.end(),
              [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  }
  return merged;
}

std::vector<int> MovingMedianSteps(const std::vector<double>& s, const MovingMedianOptions& o) {
  std::vector<int> out;
  const int n = static_cast<int>(s.size()), w = std::max(1, o.window);
  auto median = [&](int from, int to) {
    std::vector<double> v(s.begin() + from, s.begin() + to);
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    double hi = v[v.size() / 2];
    if (v.size() % 2) return hi;
    double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2));
    return (lo + hi) / 2;
  };
  // A run of flagged indices gives one step: the middle of the indices where the ratio is
  // (within 0.1 %) at its largest (a clean step flags a plateau of W indices around itself).
  std::vector<std::pair<int, double>> run;
  auto flush = [&] {
    if (run.empty()) return;
    double best = 0;
    for (const auto& r : run) best = std::max(best, r.second);
    int first = -1, last = -1;
    for (const auto& r : run)
      if (r.second >= best * 0.999) {
        if (first < 0) first = r.first;
        last = r.first;
      }
    out.push_back((first + last + 1) / 2);
    run.clear();
  };
  for (int i = w; i + w <= n; ++i) {
    double before = median(i - w, i), after = median(i, i + w);
    double d = before != 0 ? std::fabs(after / before - 1) * 100 : 0;
    if (d > o.threshold_pct)
      run.emplace_back(i, d);
    else
      flush();
  }
  flush();
  return out;
}

int MinStepSeriesLength(const EDivisiveOptions& o) {
  const int side = std::max(2, o.min_segment);
  if (o.parametric_below > 2 * side) return 2 * side;
  if (1.0 / (o.permutations + 1) > o.significance) return std::numeric_limits<int>::max();
  for (int n = 2 * std::max(1, o.min_segment);; ++n) {
    double c = 1;  // C(n, n/2)
    for (int k = 1; k <= n / 2; ++k) c = c * (n - n / 2 + k) / k;
    if (2 / c <= o.significance) return n;
  }
}

}  // namespace vouch
