#include "trace/figures.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace vouch::trace {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;
constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();

// The union of intervals that come in (start, end) order, merged as they come: Next gives its
// next interval (empty inputs dropped) and adds it to length(). Nothing is copied: for 5 M
// kernels the intervals, their union and the launches' union were three 80 MB vectors.
template <class Source>  // bool (*)(Interval*): the next input interval in order; false at the end
class UnionStream {
 public:
  explicit UnionStream(Source& src) : src_(src) { more_ = Pull(); }
  bool Next(Interval* out) {
    if (!more_) return false;
    Interval cur = in_;
    while ((more_ = Pull()) && in_.first <= cur.second)
      cur.second = std::max(cur.second, in_.second);
    length_ += cur.second - cur.first;
    *out = cur;
    return true;
  }
  std::int64_t length() const { return length_; }

 private:
  bool Pull() {
    while (src_(&in_))
      if (in_.second > in_.first) return true;
    return false;
  }
  Source& src_;
  Interval in_{};
  bool more_ = false;
  std::int64_t length_ = 0;
};

// Length of the intersection of two unions. Both are drained, so their lengths are complete.
template <class A, class B>
std::int64_t Intersect(A& a, B& b) {
  std::int64_t n = 0;
  Interval x, y;
  bool more_x = a.Next(&x), more_y = b.Next(&y);
  while (more_x && more_y) {
    std::int64_t lo = std::max(x.first, y.first), hi = std::min(x.second, y.second);
    if (hi > lo) n += hi - lo;
    if (x.second < y.second)
      more_x = a.Next(&x);
    else
      more_y = b.Next(&y);
  }
  while (more_x) more_x = a.Next(&x);
  while (more_y) more_y = b.Next(&y);
  return n;
}

// The (start, end) intervals of the events at IDS that KEEP selects, in (start, end) order:
// read in place when they come in that order already (readers mostly give them so), else
// copied and sorted once.
template <class Events, class Ids, class Keep>
class InOrder {
 public:
  InOrder(const Events& events, const Ids& ids, Keep keep, bool in_order)
      : events_(events), keep_(keep), it_(ids.begin()), end_(ids.end()), in_order_(in_order) {
    if (in_order_) return;
    for (auto i : ids)
      if (keep_(events_[i])) copy_.emplace_back(events_[i].start_ns, events_[i].end_ns);
    std::sort(copy_.begin(), copy_.end());
  }
  bool operator()(Interval* out) {
    if (!in_order_) {
      if (pos_ == copy_.size()) return false;
      *out = copy_[pos_++];
      return true;
    }
    for (; it_ != end_; ++it_) {
      const auto& e = events_[*it_];
      if (!keep_(e)) continue;
      *out = {e.start_ns, e.end_ns};
      ++it_;
      return true;
    }
    return false;
  }

 private:
  const Events& events_;
  Keep keep_;
  typename Ids::const_iterator it_, end_;
  bool in_order_;
  std::vector<Interval> copy_;
  std::size_t pos_ = 0;
};

// Gaps, the kernel union, the launch API union and their overlap into F, from the kernels' and
// the launches' intervals in (start, end) order.
template <class Kernels, class Launches>
void AddUnions(Kernels& kernels, Launches& launches, Figures* figures) {
  Figures& f = *figures;
  // Gaps: kernels in start order; a gap is the time from the latest end so far to the next
  // start, when positive (kernels on other streams may overlap).
  std::int64_t reach = kNone;
  auto kernel_source = [&](Interval* k) {
    if (!kernels(k)) return false;
    if (reach != kNone && k->first > reach) {
      std::int64_t g = k->first - reach;
      ++f.gaps.count;
      f.gaps.total_ns += g;
      f.gaps.max_ns = std::max(f.gaps.max_ns, g);
    }
    reach = std::max(reach, k->second);
    return true;
  };
  UnionStream kernel_union(kernel_source);
  UnionStream launch_union(launches);
  f.launch_api_overlap_ns = Intersect(launch_union, kernel_union);
  f.kernel_union_ns = kernel_union.length();
  f.launch_api_union_ns = launch_union.length();
}

// Reads a sorted vector of intervals.
struct VectorSource {
  const std::vector<Interval>& v;
  std::size_t pos = 0;
  bool operator()(Interval* out) {
    if (pos == v.size()) return false;
    *out = v[pos++];
    return true;
  }
};

template <class OpIds, class ApiIds>
Figures Compute(const Trace& t, const OpIds& ops, const ApiIds& api, std::int64_t elapsed_ns) {
  Figures f;
  f.elapsed_ns = elapsed_ns;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = kNone;
  Interval last_kernel{kNone, kNone};
  bool kernels_in_order = true;
  for (auto i : ops) {
    const GpuOp& o = t.ops[i];
    lo = std::min(lo, o.start_ns);
    hi = std::max(hi, o.end_ns);
    ++f.gpu_op_count;
    std::int64_t d = o.end_ns - o.start_ns;
    switch (o.kind) {
      case GpuOpKind::kKernel: {
        ++f.kernel_count;
        f.kernel_sum_ns += d;
        Interval k{o.start_ns, o.end_ns};
        if (k < last_kernel) kernels_in_order = false;
        last_kernel = k;
        break;
      }
      case GpuOpKind::kMemcpy:
        ++f.memcpy_count;
        f.memcpy_ns += d;
        f.memcpy_bytes += o.bytes;
        break;
      case GpuOpKind::kMemset:
        ++f.memset_count;
        f.memset_ns += d;
        f.memset_bytes += o.bytes;
        break;
    }
  }
  if (f.gpu_op_count) f.gpu_span_ns = hi - lo;
  Interval last_launch{kNone, kNone};
  bool launches_in_order = true;
  for (auto i : api) {
    const ApiCall& a = t.api[i];
    if (!a.is_launch) continue;
    ++f.launch_api_count;
    Interval l{a.start_ns, a.end_ns};
    if (l < last_launch) launches_in_order = false;
    last_launch = l;
  }
  InOrder kernels(
      t.ops, ops, [](const GpuOp& o) { return o.kind == GpuOpKind::kKernel; }, kernels_in_order);
  InOrder launches(
      t.api, api, [](const ApiCall& a) { return a.is_launch; }, launches_in_order);
  AddUnions(kernels, launches, &f);
  return f;
}

// The ids 0 .. n-1, as a range (std::views::iota does not compile with clang 14 and
// libstdc++ 12, which the fuzz build uses).
class AllIds {
 public:
  class const_iterator {
   public:
    explicit const_iterator(std::uint32_t i) : i_(i) {}
    std::uint32_t operator*() const { return i_; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    std::uint32_t i_;
  };
  explicit AllIds(std::size_t n) : n_(static_cast<std::uint32_t>(n)) {}
  const_iterator begin() const { return const_iterator(0); }
  const_iterator end() const { return const_iterator(n_); }

 private:
  std::uint32_t n_;
};

}  // namespace

Figures ComputeFigures(const Trace& t, const std::vector<std::uint32_t>& ops,
                       const std::vector<std::uint32_t>& api, std::int64_t elapsed_ns) {
  return Compute(t, ops, api, elapsed_ns);
}

Figures ComputeFiguresAll(const Trace& t, std::int64_t elapsed_ns) {
  return Compute(t, AllIds(t.ops.size()), AllIds(t.api.size()), elapsed_ns);
}

void AddUnionFigures(std::vector<Interval>* kernels, std::vector<Interval>* launches, Figures* f) {
  for (auto* v : {kernels, launches})
    if (!std::is_sorted(v->begin(), v->end())) std::sort(v->begin(), v->end());
  VectorSource k{*kernels}, l{*launches};
  AddUnions(k, l, f);
}

std::int64_t UnionLength(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  VectorSource src{intervals};
  UnionStream u(src);
  Interval iv;
  while (u.Next(&iv)) {
  }
  return u.length();
}

std::int64_t IntersectionOfUnions(std::vector<Interval> a, std::vector<Interval> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  VectorSource sa{a}, sb{b};
  UnionStream ua(sa), ub(sb);
  return Intersect(ua, ub);
}

}  // namespace vouch::trace
