#include "trend/steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace vouch {
namespace {

// Counts and sums over ranks 0..n-1 (Fenwick / binary indexed tree).
class Fenwick {
 public:
  explicit Fenwick(size_t n) : cnt_(n + 1, 0), sum_(n + 1, 0.0) {}
  void Add(size_t rank, double v) {
    for (size_t i = rank + 1; i < cnt_.size(); i += i & (~i + 1)) {
      cnt_[i] += 1;
      sum_[i] += v;
    }
  }
  // Count and sum of ranks < RANK.
  std::pair<double, double> Below(size_t rank) const {
    double c = 0, s = 0;
    for (size_t i = rank; i > 0; i -= i & (~i + 1)) {
      c += cnt_[i];
      s += sum_[i];
    }
    return {c, s};
  }

 private:
  std::vector<double> cnt_;
  std::vector<double> sum_;
};

// q(tau) for every split of Z; returns the best (tau, q). Q, when given, receives them all.
std::pair<int, double> BestSplit(const std::vector<double>& z, int min_segment,
                                 std::vector<double>* q) {
  const size_t n = z.size();
  if (q) q->assign(n, 0.0);
  if (n < 2 * static_cast<size_t>(min_segment) || n < 4) return {-1, 0.0};
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return z[a] < z[b]; });
  std::vector<size_t> rank(n);
  std::vector<double> pre(n + 1, 0.0);
  for (size_t p = 0; p < n; ++p) {
    rank[order[p]] = p;
    pre[p + 1] = pre[p] + z[order[p]];
  }
  // Sum over all others of |z_j - z_i|, and the all-pairs sum.
  std::vector<double> total(n);
  double all_pairs = 0;
  for (size_t p = 0; p < n; ++p) {
    double s = z[order[p]];
    double below = static_cast<double>(p) * s - pre[p];
    double above = (pre[n] - pre[p + 1]) - static_cast<double>(n - p - 1) * s;
    total[order[p]] = below + above;
    all_pairs += below;
  }
  Fenwick tree(n);
  double a = 0, b = 0, c = all_pairs, inserted_sum = 0;
  int best = -1;
  double best_q = -std::numeric_limits<double>::infinity();
  const double nd = static_cast<double>(n);
  for (size_t t = 0; t + 1 < n; ++t) {
    double x = z[t];
    auto [lo_c, lo_s] = tree.Below(rank[t]);
    double hi_c = static_cast<double>(t) - lo_c, hi_s = inserted_sum - lo_s;
    double rx = lo_c * x - lo_s + (hi_s - hi_c * x);
    double ry = total[t] - rx;
    b += rx;
    c -= ry;
    a += ry - rx;
    tree.Add(rank[t], x);
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

std::vector<double> EnergyStatistics(const std::vector<double>& series, int min_segment) {
  std::vector<double> q;
  (void)BestSplit(series, min_segment, &q);
  return q;
}

std::vector<ChangePoint> EDivisive(const std::vector<double>& series, const EDivisiveOptions& o) {
  std::vector<ChangePoint> out;
  for (double v : series)
    if (!std::isfinite(v)) return out;  // no statistic over a non-finite value
  const int n = static_cast<int>(series.size());
  const int min_seg = std::max(2, o.min_segment);
  std::mt19937_64 rng(o.seed);
  std::vector<Segment> segs = {Scan(series, 0, n, min_seg)};
  while (static_cast<int>(out.size()) < o.max_steps) {
    auto it = std::max_element(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) {
      if ((a.split < 0) != (b.split < 0)) return a.split < 0;
      return a.q < b.q;
    });
    if (it == segs.end() || it->split < 0) break;
    // Permutation test of the best split within its own segment.
    std::vector<double> z(series.begin() + it->begin, series.begin() + it->end);
    int at_least = 0;
    for (int r = 0; r < o.permutations; ++r) {
      std::shuffle(z.begin(), z.end(), rng);
      if (BestSplit(z, min_seg, nullptr).second >= it->q) ++at_least;
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
  if (1.0 / (o.permutations + 1) > o.significance) return std::numeric_limits<int>::max();
  for (int n = 2 * std::max(1, o.min_segment);; ++n) {
    double c = 1;  // C(n, n/2)
    for (int k = 1; k <= n / 2; ++k) c = c * (n - n / 2 + k) / k;
    if (2 / c <= o.significance) return n;
  }
}

}  // namespace vouch
