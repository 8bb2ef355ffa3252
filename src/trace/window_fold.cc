#include "trace/window_fold.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/whole_fold.h"

namespace vouch::trace {

IntervalLists::Chunk& IntervalLists::Room(List* list, Interval v) {
  const bool fits = v.second - v.first <= kMaxOffset;  // as offsets from a chunk starting at V
  if (list->tail != kNone) {
    Chunk& c = At(list->tail);
    if (c.wide ? c.n < kPerWideChunk
               : c.n < kPerChunk && v.first >= c.base && v.second - c.base <= kMaxOffset)
      return c;
  }
  if (chunks_ % kChunksPerBlock == 0) blocks_.push_back(std::make_unique<Chunk[]>(kChunksPerBlock));
  const std::uint32_t i = chunks_++;
  (list->tail == kNone ? list->head : At(list->tail).next) = i;
  list->tail = i;
  Chunk& c = At(i);
  c.base = v.first;
  c.wide = !fits;
  return c;
}

void IntervalLists::Append(List* list, Interval v, bool merge) {
  if (merge && list->size) {
    Chunk& c = At(list->tail);
    const Interval last = Last(*list);
    if (v.first <= last.second) {
      if (v.second <= last.second) return;
      if (c.wide) {
        c.abs[2 * c.n - 1] = v.second;
        return;
      }
      if (v.second - c.base <= kMaxOffset) {
        c.off[2 * c.n - 1] = static_cast<std::uint32_t>(v.second - c.base);
        return;
      }
      v.first = last.second;  // the rest, a touching piece of its own: the same union
    }
  }
  Chunk& c = Room(list, v);
  if (c.wide) {
    c.abs[2 * c.n] = v.first;
    c.abs[2 * c.n + 1] = v.second;
  } else {
    c.off[2 * c.n] = static_cast<std::uint32_t>(v.first - c.base);
    c.off[2 * c.n + 1] = static_cast<std::uint32_t>(v.second - c.base);
  }
  ++c.n;
  ++list->size;
}

void IntervalLists::Next(Cursor* c) const {
  if (++c->at < At(c->chunk).n) return;
  c->chunk = At(c->chunk).next;
  c->at = 0;
}

std::vector<IntervalLists::Interval> IntervalLists::Copy(const List& list) const {
  std::vector<Interval> v;
  v.reserve(list.size);
  for (Cursor c = Begin(list); Valid(c); Next(&c)) v.push_back(Get(c));
  return v;
}

WindowFold::WindowFold(const std::vector<Range>& ranges, std::uint32_t want) {
  // As Summarize: pointers in the ranges' order, sorted by start (the same sort, so that equal
  // starts come in the same order).
  std::vector<const Range*> cpu;
  for (const auto& r : ranges)
    if (r.name_id == want && r.kind == RangeKind::kCpu) cpu.push_back(&r);
  std::sort(cpu.begin(), cpu.end(),
            [](const Range* x, const Range* y) { return x->start_ns < y->start_ns; });
  insts_.resize(cpu.size());
  for (std::size_t k = 0; k < cpu.size(); ++k) {
    insts_[k].range = cpu[k];
    insts_[k].f.elapsed_ns = cpu[k]->end_ns - cpu[k]->start_ns;
  }
  // Each thread's instances, in instance order (by start).
  for (std::uint32_t k = 0; k < insts_.size(); ++k) {
    const std::pair<std::int64_t, std::int64_t> key(cpu[k]->pid, cpu[k]->tid);
    auto it = std::lower_bound(threads_.begin(), threads_.end(), key,
                               [](const auto& t, const auto& x) { return t.first < x; });
    if (it == threads_.end() || it->first != key) it = threads_.insert(it, {key, Thread{}});
    Thread& t = it->second;
    t.insts.push_back(k);
    t.starts.push_back(cpu[k]->start_ns);
    t.reach.push_back(std::max(t.reach.empty() ? kNoTime : t.reach.back(), cpu[k]->end_ns));
  }
}

void WindowFold::Call(std::int64_t start, std::int64_t end, std::int64_t pid, std::int64_t tid,
                      std::int64_t correlation, bool is_launch) {
  WholeFold::AddDuration(std::max<std::int64_t>(end - start, 0), &api_total, &api_too_long);
  const std::pair<std::int64_t, std::int64_t> key(pid, tid);
  if (last_thread_ >= threads_.size() || threads_[last_thread_].first != key) {
    auto it = std::lower_bound(threads_.begin(), threads_.end(), key,
                               [](const auto& t, const auto& x) { return t.first < x; });
    if (it == threads_.end() || it->first != key) return;
    last_thread_ = static_cast<std::size_t>(it - threads_.begin());
  }
  const Thread& t = threads_[last_thread_].second;
  // The instances with start <= START < end: before the first that starts after it, back while
  // an instance so far reaches past it.
  auto j = std::upper_bound(t.starts.begin(), t.starts.end(), start) - t.starts.begin();
  while (j-- > 0 && t.reach[static_cast<std::size_t>(j)] > start) {
    const std::uint32_t k = t.insts[static_cast<std::size_t>(j)];
    Inst& in = insts_[k];
    if (in.range->end_ns <= start) continue;
    if (!links_.empty() && correlation < links_.back().correlation) links_sorted_ = false;
    links_.push_back({correlation, k});
    if (!is_launch) continue;
    ++in.f.launch_api_count;
    const Interval l(start, end);
    if (l < in.last_launch) in.launches_unordered = true;
    in.last_launch = l;
    if (end <= start) continue;  // no length: not in the union
    // In order, merged into the union as they come; out of order, kept and merged in EndCalls.
    lists_.Append(&in.launches, l, /*merge=*/!in.launches_unordered);
  }
}

void WindowFold::EndCalls() {
  if (!links_sorted_) std::sort(links_.begin(), links_.end());
  for (Inst& in : insts_) {
    if (in.launches_unordered) {
      std::vector<Interval> v = lists_.Copy(in.launches);
      std::sort(v.begin(), v.end());
      IntervalLists::Clear(&in.launches);
      for (const auto& l : v) lists_.Append(&in.launches, l, /*merge=*/true);
    }
    for (auto c = lists_.Begin(in.launches); lists_.Valid(c); lists_.Next(&c)) {
      const Interval l = lists_.Get(c);
      in.f.launch_api_union_ns += l.second - l.first;
    }
    in.at = lists_.Begin(in.launches);
  }
}

const WindowFold::Link* WindowFold::FirstLink(std::int64_t correlation) {
  // From where the last search ended (ops in time order have increasing ids), galloping
  // forward, else a binary search below it.
  const Link key{correlation, 0};
  const std::size_t n = links_.size();
  auto below = [](const Link& l, const Link& k) { return l < k; };
  if (hint_ > 0 && !(links_[hint_ - 1] < key)) {
    hint_ = static_cast<std::size_t>(
        std::lower_bound(links_.begin(), links_.begin() + static_cast<std::ptrdiff_t>(hint_), key,
                         below) -
        links_.begin());
  } else {
    std::size_t lo = hint_, step = 1;
    while (n - lo > step && links_[lo + step] < key) {
      lo += step;
      step *= 2;
    }
    const std::size_t hi = n - lo > step ? lo + step + 1 : n;
    hint_ = static_cast<std::size_t>(
        std::lower_bound(links_.begin() + static_cast<std::ptrdiff_t>(lo),
                         links_.begin() + static_cast<std::ptrdiff_t>(hi), key, below) -
        links_.begin());
  }
  return links_.data() + hint_;
}

template <class F>
void WindowFold::ForEachInstance(std::int64_t correlation, std::int64_t pid, F f) {
  if (correlation < 0 || links_.empty()) return;  // as Summarize: ops without one launch none
  const Link* end = links_.data() + links_.size();
  for (const Link* l = FirstLink(correlation); l != end && l->correlation == correlation; ++l) {
    const std::int64_t launcher = insts_[l->inst].range->pid;
    if (pid >= 0 && launcher >= 0 && pid != launcher) continue;
    f(l->inst);
  }
}

void WindowFold::Op(GpuOpKind kind, std::int64_t start, std::int64_t end, std::int64_t correlation,
                    std::int64_t pid, std::uint32_t name_id, std::uint64_t bytes) {
  const std::int64_t d = end - start;
  WholeFold::AddDuration(d, &op_total, &ops_too_long);
  bool any = false;
  ForEachInstance(correlation, pid, [&](std::uint32_t k) {
    any = true;
    Inst& in = insts_[k];
    Figures& f = in.f;
    in.op_lo = std::min(in.op_lo, start);
    in.op_hi = std::max(in.op_hi, end);
    ++f.gpu_op_count;
    switch (kind) {
      case GpuOpKind::kKernel:
        ++f.kernel_count;
        f.kernel_sum_ns += d;
        Kernel(in, start, end);
        break;
      case GpuOpKind::kMemcpy:
        ++f.memcpy_count;
        f.memcpy_ns += d;
        f.memcpy_bytes += bytes;
        break;
      case GpuOpKind::kMemset:
        ++f.memset_count;
        f.memset_ns += d;
        f.memset_bytes += bytes;
        break;
    }
  });
  if (any && kind == GpuOpKind::kKernel) AddKernelDuration(name_id, d);
}

void WindowFold::Kernel(Inst& in, std::int64_t start, std::int64_t end) {
  const Interval k(start, end);
  if (k < in.last_kernel && !in.kernels_unordered) {
    in.kernels_unordered = true;
    ++unordered_kernels_;
  }
  in.last_kernel = k;
  if (in.kernels_unordered) return;  // formed again in EndKernelsAgain
  // As figures.cc: a gap from the latest end so far to the next start, when positive; the
  // union merged as the kernels come, each piece of it intersected with the launches' union.
  Figures& f = in.f;
  if (in.reach != kNoTime && start > in.reach) {
    const std::int64_t g = start - in.reach;
    ++f.gaps.count;
    f.gaps.total_ns += g;
    f.gaps.max_ns = std::max(f.gaps.max_ns, g);
  }
  in.reach = std::max(in.reach, end);
  if (end <= start) return;
  if (in.piece.first != kNoTime && start <= in.piece.second) {
    in.piece.second = std::max(in.piece.second, end);
    return;
  }
  ClosePiece(in);
  in.piece = k;
}

void WindowFold::ClosePiece(Inst& in) {
  if (in.piece.first == kNoTime) return;
  const auto [lo, hi] = in.piece;
  in.f.kernel_union_ns += hi - lo;
  // The launches' union pieces that end by LO meet no later piece either (those start after HI).
  while (lists_.Valid(in.at) && lists_.Get(in.at).second <= lo) lists_.Next(&in.at);
  for (auto c = in.at; lists_.Valid(c); lists_.Next(&c)) {
    const Interval l = lists_.Get(c);
    if (l.first >= hi) break;
    in.f.launch_api_overlap_ns += std::min(hi, l.second) - std::max(lo, l.first);
    if (l.second > hi) break;
    in.at = c;
  }
  in.piece = {kNoTime, kNoTime};
}

void WindowFold::KernelAgain(std::int64_t start, std::int64_t end, std::int64_t correlation,
                             std::int64_t pid) {
  ForEachInstance(correlation, pid, [&](std::uint32_t k) {
    if (insts_[k].kernels_unordered) again_.push_back({k, {start, end}});
  });
}

void WindowFold::EndKernelsAgain() {
  std::sort(again_.begin(), again_.end());
  for (std::size_t i = 0; i < again_.size();) {
    Inst& in = insts_[again_[i].first];
    in.kernels_unordered = false;
    in.last_kernel = {kNoTime, kNoTime};
    in.reach = kNoTime;
    in.piece = {kNoTime, kNoTime};
    in.f.gaps = {};
    in.f.kernel_union_ns = in.f.launch_api_overlap_ns = 0;
    in.at = lists_.Begin(in.launches);
    for (const std::uint32_t k = again_[i].first; i < again_.size() && again_[i].first == k; ++i)
      Kernel(in, again_[i].second.first, again_[i].second.second);
  }
  again_ = {};
}

void WindowFold::AddKernelDuration(std::uint32_t name_id, std::int64_t d) {
  if (name_id >= durations_.size()) durations_.resize(std::size_t{name_id} + 1);
  Durations& v = durations_[name_id];
  if (v.n == 0) first_seen_.push_back(name_id);
  if (v.in_last == v.last_size) {
    v.last_size = v.blocks.empty() ? kFirstBlock : std::min(2 * v.last_size, kBlock);
    v.blocks.push_back(std::make_unique_for_overwrite<std::int64_t[]>(v.last_size));
    v.in_last = 0;
  }
  v.blocks.back()[v.in_last++] = d;
  ++v.n;
}

Result<Summary> WindowFold::Summarize(const Trace& meta, const SummaryOptions& opt) {
  if (auto c = CheckDurationTotals(meta); !c.ok()) return c.error();
  if (ops_too_long) return DurationTotalsError(meta.path, /*ops=*/true);
  if (api_too_long) return DurationTotalsError(meta.path, /*ops=*/false);
  links_ = {};
  Summary s = BeginSummary(meta, opt);
  s.attribution =
      "GPU work launched (by correlation id) from API calls inside each host range, same "
      "thread";
  s.instances.reserve(insts_.size());
  for (std::size_t k = 0; k < insts_.size(); ++k) {
    Inst& in = insts_[k];
    ClosePiece(in);
    if (in.f.gpu_op_count) in.f.gpu_span_ns = in.op_hi - in.op_lo;
    Instance inst;
    inst.index = static_cast<std::int64_t>(k);
    inst.start_ns = in.range->start_ns;
    inst.figures = in.f;
    s.instances.push_back(inst);
  }
  insts_ = {};
  lists_ = {};
  if (auto e = AddUpInstances(&s, meta.path, opt)) return *e;
  KernelDurations durations(meta.names.size());
  for (auto id : first_seen_) durations.Count(id, durations_[id].n);
  durations.Place();
  for (auto id : first_seen_) {  // each block freed once copied
    Durations& v = durations_[id];
    std::size_t size = kFirstBlock;
    for (std::size_t b = 0; b < v.blocks.size(); ++b) {
      const std::size_t n = b + 1 == v.blocks.size() ? v.in_last : size;
      for (std::size_t i = 0; i < n; ++i) durations.Fill(id, v.blocks[b][i]);
      v.blocks[b].reset();
      size = std::min(2 * size, kBlock);
    }
  }
  durations_ = std::vector<Durations>();
  FinishSummary(&s, meta, durations, opt);
  return s;
}

}  // namespace vouch::trace
