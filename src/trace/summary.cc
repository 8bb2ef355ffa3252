#include "trace/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <span>
#include <unordered_map>

#include "trace/figures.h"
#include "trace/summary_parts.h"
#include "util/strings.h"

namespace vouch::trace {
namespace {

double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

double Figures::busy_percent() const {
  return Pct(static_cast<double>(kernel_union_ns), static_cast<double>(gpu_span_ns));
}
double Figures::launch_overlap_percent() const {
  return Pct(static_cast<double>(launch_api_overlap_ns), static_cast<double>(launch_api_union_ns));
}

void Figures::Add(const Figures& o) {
  // Instances may overlap (nested ranges), so their sums are not bounded by the trace's:
  // an overflow is recorded, and Summarize refuses it, rather than wrapping to a negative.
  auto add = [this](auto& into, auto v) {
    if (__builtin_add_overflow(into, v, &into)) overflow = true;
  };
  add(elapsed_ns, o.elapsed_ns);
  add(gpu_span_ns, o.gpu_span_ns);
  add(kernel_sum_ns, o.kernel_sum_ns);
  add(kernel_union_ns, o.kernel_union_ns);
  add(gpu_op_count, o.gpu_op_count);
  add(kernel_count, o.kernel_count);
  add(gaps.count, o.gaps.count);
  add(gaps.total_ns, o.gaps.total_ns);
  gaps.max_ns = std::max(gaps.max_ns, o.gaps.max_ns);
  add(launch_api_count, o.launch_api_count);
  add(launch_api_union_ns, o.launch_api_union_ns);
  add(launch_api_overlap_ns, o.launch_api_overlap_ns);
  add(memcpy_count, o.memcpy_count);
  add(memcpy_ns, o.memcpy_ns);
  add(memcpy_bytes, o.memcpy_bytes);
  add(memset_count, o.memset_count);
  add(memset_ns, o.memset_ns);
  add(memset_bytes, o.memset_bytes);
  overflow = overflow || o.overflow;
}

Summary BeginSummary(const Trace& t, const SummaryOptions& opt) {
  Summary s;
  s.path = t.path;
  s.format = t.format;
  s.window = opt.window;
  s.rules_source = opt.rules.source;
  s.skipped_by_category = t.skipped_by_category;
  s.unknown_categories = t.unknown_categories;
  // Phases: the names of host ranges (GPU ranges when a trace has only those).
  bool any_cpu = std::any_of(t.ranges.begin(), t.ranges.end(),
                             [](const Range& r) { return r.kind == RangeKind::kCpu; });
  for (const auto& r : t.ranges)
    if ((r.kind == RangeKind::kCpu) == any_cpu) ++s.phases[t.Name(r.name_id)];
  for (const auto& [cat, n] : t.unknown_categories)
    s.warnings.push_back(fmt::format("{} event(s) of unknown category '{}' were ignored", n, cat));
  s.warnings.insert(s.warnings.end(), t.warnings.begin(), t.warnings.end());
  if (opt.window.empty()) s.attribution = "whole trace";
  return s;
}

std::optional<Error> AddUpInstances(Summary* s, std::string_view path, const SummaryOptions& opt) {
  for (const auto& inst : s->instances) s->total.Add(inst.figures);
  if (!s->total.overflow) return std::nullopt;
  return MakeError(
      "{}: the window '{}' adds up to more than 2^63 ns or bytes over its instances: not a real "
      "trace (corrupt times?)",
      path, opt.window);
}

void AddPhasesWarning(Summary* summary) {
  Summary& s = *summary;
  if (s.phases.size() >= 2) {
    std::vector<std::string> parts;
    std::string busiest;
    std::int64_t most = 0;
    for (const auto& [name, n] : s.phases) {
      parts.push_back(fmt::format("{} x{}", name, n));
      if (n > most) {
        most = n;
        busiest = name;
      }
    }
    s.warnings.push_back(fmt::format(
        "this trace holds several named phases ({}); a whole-run ranking mixes them and its top "
        "kernel may be one-time work. Which annotation? Try --window {}",
        fmt::join(parts, ", "), busiest));
  }
}

Result<Summary> Summarize(const Trace& t, const SummaryOptions& opt) {
  if (auto c = CheckDurationTotals(t); !c.ok()) return c.error();
  Summary s = BeginSummary(t, opt);
  std::vector<char> in_window(t.ops.size(), 0);  // for the kernel table: each op once
  if (opt.window.empty()) {
    s.total = ComputeFiguresAll(t, t.last_ns - t.first_ns);
    std::fill(in_window.begin(), in_window.end(), 1);
    AddPhasesWarning(&s);
  } else {
    std::uint32_t want = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t i = 0; i < t.names.size(); ++i)
      if (t.names[i] == opt.window) want = i;
    std::vector<const Range*> cpu, gpu;
    for (const auto& r : t.ranges) {
      if (r.name_id != want) continue;
      (r.kind == RangeKind::kCpu ? cpu : gpu).push_back(&r);
    }
    if (cpu.empty() && gpu.empty()) {
      std::vector<std::string> names, listed;
      for (const auto& [n, c] : s.phases) {
        names.push_back(n);
        listed.push_back(fmt::format("{} ({})", n, c));
      }
      std::string near = ClosestMatch(opt.window, names);
      for (const auto& n : names)  // "decode" -> "decode_step"
        if (near.empty() && n.find(opt.window) != std::string::npos) near = n;
      if (names.empty())
        return MakeError(
            "{}: no annotation or NVTX range named '{}': the trace has no named ranges; "
            "summarise the whole trace (drop --window) or add record_function/NVTX ranges",
            t.path, opt.window);
      return MakeError("{}: no annotation or NVTX range named '{}'{}; the trace has: {}", t.path,
                       opt.window, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                       fmt::join(listed, ", "));
    }
    auto by_start = [](const Range* x, const Range* y) { return x->start_ns < y->start_ns; };
    std::sort(cpu.begin(), cpu.end(), by_start);
    std::sort(gpu.begin(), gpu.end(), by_start);
    // Ops sorted by start, for range queries.
    std::vector<std::uint32_t> order(t.ops.size());
    std::iota(order.begin(), order.end(), 0u);
    auto op_before = [&](auto x, auto y) { return t.ops[x].start_ns < t.ops[y].start_ns; };
    if (!std::is_sorted(order.begin(), order.end(), op_before))
      std::sort(order.begin(), order.end(), op_before);
    // API calls by (pid, tid), sorted by start.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> api_by_thread;
    for (std::uint32_t i = 0; i < t.api.size(); ++i)
      api_by_thread[{t.api[i].pid, t.api[i].tid}].push_back(i);
    auto api_before = [&](auto x, auto y) { return t.api[x].start_ns < t.api[y].start_ns; };
    for (auto& [k, v] : api_by_thread)
      if (!std::is_sorted(v.begin(), v.end(), api_before))
        std::sort(v.begin(), v.end(), api_before);
    auto api_in = [&](const Range& r) {
      std::vector<std::uint32_t> out;
      auto it = api_by_thread.find({r.pid, r.tid});
      if (it == api_by_thread.end()) return out;
      const auto& v = it->second;
      auto first = std::lower_bound(
          v.begin(), v.end(), r.start_ns,
          [&](std::uint32_t i, std::int64_t ts) { return t.api[i].start_ns < ts; });
      for (auto p = first; p != v.end() && t.api[*p].start_ns < r.end_ns; ++p) out.push_back(*p);
      return out;
    };
    // CPU range for each GPU range: same External id, else the same position.
    std::unordered_map<std::int64_t, const Range*> cpu_by_external;
    for (const Range* r : cpu)
      if (r->external_id >= 0) cpu_by_external[r->external_id] = r;

    if (!gpu.empty()) {
      s.attribution =
          "GPU work inside each gpu_user_annotation range on the GPU timeline (same device)";
      for (std::size_t k = 0; k < gpu.size(); ++k) {
        const Range& g = *gpu[k];
        const Range* c = nullptr;
        if (auto it = cpu_by_external.find(g.external_id);
            g.external_id >= 0 && it != cpu_by_external.end())
          c = it->second;
        else if (gpu.size() == cpu.size())
          c = cpu[k];
        std::vector<std::uint32_t> ops;
        auto first = std::lower_bound(
            order.begin(), order.end(), g.start_ns,
            [&](std::uint32_t i, std::int64_t ts) { return t.ops[i].start_ns < ts; });
        for (auto p = first; p != order.end() && t.ops[*p].start_ns < g.end_ns; ++p) {
          if (g.pid >= 0 && t.ops[*p].device >= 0 && t.ops[*p].device != g.pid) continue;
          ops.push_back(*p);
        }
        std::vector<std::uint32_t> api = c ? api_in(*c) : std::vector<std::uint32_t>{};
        Instance inst;
        inst.index = static_cast<std::int64_t>(k);
        inst.start_ns = g.start_ns;
        inst.figures =
            ComputeFigures(t, ops, api, c ? c->end_ns - c->start_ns : g.end_ns - g.start_ns);
        for (auto i : ops) in_window[i] = 1;
        s.instances.push_back(inst);
      }
    } else {
      s.attribution =
          "GPU work launched (by correlation id) from API calls inside each host range, same "
          "thread";
      // (correlation, op) pairs in order, searched by range: a tenth of a hash multimap's
      // memory for 5 M ops, and readers give them mostly in order already.
      std::vector<std::pair<std::int64_t, std::uint32_t>> ops_by_corr;
      ops_by_corr.reserve(t.ops.size());
      for (std::uint32_t i = 0; i < t.ops.size(); ++i)
        if (t.ops[i].correlation >= 0) ops_by_corr.emplace_back(t.ops[i].correlation, i);
      if (!std::is_sorted(ops_by_corr.begin(), ops_by_corr.end()))
        std::sort(ops_by_corr.begin(), ops_by_corr.end());
      // The first pair of an id, searched forward from where the last search ended (launches
      // in time order have increasing ids: a binary search over 5 M pairs per launch was a
      // third of a window summary), else backward.
      using CorrIt = decltype(ops_by_corr)::const_iterator;
      CorrIt hint = ops_by_corr.begin();
      auto first_of = [&](std::int64_t corr) {
        const std::pair<std::int64_t, std::uint32_t> key(corr, 0);
        const CorrIt b = ops_by_corr.begin(), e = ops_by_corr.end();
        if (hint != b && !(*(hint - 1) < key)) return hint = std::lower_bound(b, hint, key);
        CorrIt lo = hint;  // every pair before it is below KEY
        std::ptrdiff_t step = 1;
        while (e - lo > step && lo[step] < key) {
          lo += step;
          step *= 2;
        }
        return hint = std::lower_bound(lo, e - lo > step ? lo + step + 1 : e, key);
      };
      for (std::size_t k = 0; k < cpu.size(); ++k) {
        const Range& c = *cpu[k];
        auto api = api_in(c);
        std::vector<std::uint32_t> ops;
        for (auto a : api) {
          auto b = first_of(t.api[a].correlation);
          auto e = b;
          while (e != ops_by_corr.end() && e->first == t.api[a].correlation) ++e;
          for (auto p = b; p != e; ++p) {
            const GpuOp& o = t.ops[p->second];
            if (o.pid >= 0 && t.api[a].pid >= 0 && o.pid != t.api[a].pid) continue;
            ops.push_back(p->second);
          }
        }
        Instance inst;
        inst.index = static_cast<std::int64_t>(k);
        inst.start_ns = c.start_ns;
        inst.figures = ComputeFigures(t, ops, api, c.end_ns - c.start_ns);
        for (auto i : ops) in_window[i] = 1;
        s.instances.push_back(inst);
      }
    }
    if (auto e = AddUpInstances(&s, t.path, opt)) return *e;
  }

  KernelDurations durations(t.names.size());
  for (std::uint32_t i = 0; i < t.ops.size(); ++i)
    if (in_window[i] && t.ops[i].kind == GpuOpKind::kKernel) durations.Count(t.ops[i].name_id);
  durations.Place();
  for (std::uint32_t i = 0; i < t.ops.size(); ++i)
    if (in_window[i] && t.ops[i].kind == GpuOpKind::kKernel)
      durations.Fill(t.ops[i].name_id, t.ops[i].end_ns - t.ops[i].start_ns);
  FinishSummary(&s, t, durations, opt);
  return s;
}

void KernelDurations::Place() {
  std::size_t kernels = 0;
  fill_at_.assign(count_of_.size(), 0);
  for (auto id : first_seen_) {
    fill_at_[id] = kernels;
    kernels += count_of_[id];
  }
  flat_ = std::make_unique_for_overwrite<std::int64_t[]>(kernels);
}

void FinishSummary(Summary* summary, const Trace& t, KernelDurations& kd,
                   const SummaryOptions& opt) {
  Summary& s = *summary;
  // Names are visited in the order of an unordered_map filled in first-seen order, as
  // before: that order breaks ties between the top kernels of a component.
  std::unordered_map<std::uint32_t, std::span<std::int64_t>> durations;
  for (auto id : kd.first_seen_)
    durations[id] = {kd.flat_.get() + kd.fill_at_[id] - kd.count_of_[id], kd.count_of_[id]};
  std::map<std::string, ComponentRow> comps;
  std::map<std::string, std::int64_t> comp_top_ns;
  for (auto& [name_id, d] : durations) {
    KernelRow row;
    row.name = t.Name(name_id);
    row.component = opt.rules.Classify(row.name);
    row.count = static_cast<std::int64_t>(d.size());
    row.total_ns = std::accumulate(d.begin(), d.end(), std::int64_t{0});
    row.mean_ns = static_cast<double>(row.total_ns) / static_cast<double>(row.count);
    // The median by selection, not a sort (linear; 5 M kernels were a sort each run).
    std::size_t n = d.size();
    auto [lo, hi] = std::minmax_element(d.begin(), d.end());
    row.min_ns = *lo;
    row.max_ns = *hi;
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n / 2), d.end());
    double upper = static_cast<double>(d[n / 2]);
    row.median_ns = n % 2 ? upper
                          : (static_cast<double>(*std::max_element(
                                 d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n / 2))) +
                             upper) /
                                2.0;
    row.mixture = row.count >= kMixtureMinCount &&
                  static_cast<double>(row.max_ns) >= kMixtureMaxOverMedian * row.median_ns;
    row.percent_of_kernel_time =
        Pct(static_cast<double>(row.total_ns), static_cast<double>(s.total.kernel_sum_ns));
    auto& c = comps[row.component];
    c.name = row.component;
    c.total_ns += row.total_ns;
    c.launches += row.count;
    if (row.total_ns > comp_top_ns[row.component]) {
      comp_top_ns[row.component] = row.total_ns;
      c.top_kernel = row.name;
    }
    s.kernels.push_back(std::move(row));
  }
  std::sort(s.kernels.begin(), s.kernels.end(), [](const KernelRow& x, const KernelRow& y) {
    return x.total_ns != y.total_ns ? x.total_ns > y.total_ns : x.name < y.name;
  });
  for (auto& [name, c] : comps) {
    c.percent_of_kernel_time =
        Pct(static_cast<double>(c.total_ns), static_cast<double>(s.total.kernel_sum_ns));
    s.components.push_back(c);
  }
  std::sort(s.components.begin(), s.components.end(),
            [](const ComponentRow& x, const ComponentRow& y) {
              return x.total_ns != y.total_ns ? x.total_ns > y.total_ns : x.name < y.name;
            });
  for (const auto& c : s.components)
    s.ranking.push_back(
        {c.name, "component", c.total_ns, c.percent_of_kernel_time,
         Pct(static_cast<double>(c.total_ns), static_cast<double>(s.total.gpu_span_ns))});
  std::int64_t idle = s.total.gpu_span_ns - s.total.kernel_union_ns;
  if (s.total.gpu_op_count > 0 && idle > 0)
    s.ranking.push_back({"gpu idle in span", "gpu_idle", idle, std::nullopt,
                         Pct(static_cast<double>(idle), static_cast<double>(s.total.gpu_span_ns))});
  std::stable_sort(s.ranking.begin(), s.ranking.end(),
                   [](const RankEntry& x, const RankEntry& y) { return x.total_ns > y.total_ns; });
  if (s.empty())
    s.warnings.push_back(
        opt.window.empty()
            ? "the trace holds no GPU work (no kernels, copies or sets): nothing to summarise"
            : fmt::format("the window '{}' holds no GPU work", opt.window));
  for (const auto& k : s.kernels)
    if (k.mixture) {
      s.warnings.push_back(
          fmt::format("kernel(s) flagged 'mixture' have a max at least {}x their median: several "
                      "shapes or phases under one "
                      "name, not a hot loop",
                      kMixtureMaxOverMedian));
      break;
    }
}

std::optional<double> DiffRow::percent_change() const {
  if (a_ns == 0) return std::nullopt;
  return 100.0 * static_cast<double>(b_ns - a_ns) / static_cast<double>(a_ns);
}
std::optional<double> HeadlineRow::percent_change() const {
  if (a == 0) return std::nullopt;
  return 100.0 * (b - a) / a;
}

namespace {

// Pairs the rows of A and B by name (in name order): total time and COUNT of each side,
// and the status "both", "added" (only in B) or "removed" (only in A).
template <class Row>
std::map<std::string, DiffRow> PairByName(const std::vector<Row>& a, const std::vector<Row>& b,
                                          std::int64_t Row::*count) {
  std::map<std::string, DiffRow> rows;
  for (bool in_b : {false, true}) {
    for (const Row& x : in_b ? b : a) {
      DiffRow& r = rows[x.name];
      r.name = x.name;
      (in_b ? r.b_ns : r.a_ns) = x.total_ns;
      (in_b ? r.b_count : r.a_count) = x.*count;
    }
  }
  for (auto& [n, r] : rows)
    r.status = r.a_count && r.b_count ? "both" : r.b_count ? "added" : "removed";
  return rows;
}

}  // namespace

Result<Diff> DiffSummaries(const Summary& a, const Summary& b,
                           std::optional<std::pair<double, double>> lengths) {
  Diff d;
  d.a = a;
  d.b = b;
  if (lengths) {
    if (!(lengths->first > 0) || !(lengths->second > 0) || lengths->first == lengths->second)
      return MakeError("--lengths needs two different positive lengths, got {} and {}",
                       lengths->first, lengths->second);
    d.length_a = lengths->first;
    d.length_b = lengths->second;
  }
  auto fa = a.total, fb = b.total;
  auto h = [&](const char* name, double x, double y) { d.headline.push_back({name, x, y}); };
  h("elapsed_ns", static_cast<double>(fa.elapsed_ns), static_cast<double>(fb.elapsed_ns));
  h("gpu_span_ns", static_cast<double>(fa.gpu_span_ns), static_cast<double>(fb.gpu_span_ns));
  h("kernel_sum_ns", static_cast<double>(fa.kernel_sum_ns), static_cast<double>(fb.kernel_sum_ns));
  h("kernel_union_ns", static_cast<double>(fa.kernel_union_ns),
    static_cast<double>(fb.kernel_union_ns));
  h("kernel_count", static_cast<double>(fa.kernel_count), static_cast<double>(fb.kernel_count));
  h("busy_percent", fa.busy_percent(), fb.busy_percent());
  h("launch_gap_total_ns", static_cast<double>(fa.gaps.total_ns),
    static_cast<double>(fb.gaps.total_ns));
  h("instances", static_cast<double>(a.instances.size()), static_cast<double>(b.instances.size()));

  auto finish = [&](DiffRow& r) {
    if (!lengths) return;
    double la = lengths->first, lb = lengths->second;
    double slope = static_cast<double>(r.b_ns - r.a_ns) / (lb - la);
    r.ns_per_unit_length = slope;
    r.fixed_ns = static_cast<double>(r.a_ns) - slope * la;
    double rel_len = lb / la - 1.0;
    double rel = r.a_ns ? static_cast<double>(r.b_ns) / static_cast<double>(r.a_ns) - 1.0 : 1e9;
    // Relative growth against relative length growth: all of it "scales", none of it "flat".
    if (std::fabs(rel) < 0.1 * std::fabs(rel_len))
      r.growth = "flat";
    else if (rel / rel_len >= 0.5)
      r.growth = "scales";
    else if (rel / rel_len > 0)
      r.growth = "partial";
    else
      r.growth = "shrinks";
  };
  for (auto& [n, r] : PairByName(a.components, b.components, &ComponentRow::launches)) {
    finish(r);
    d.components.push_back(r);
  }
  std::sort(d.components.begin(), d.components.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::max(x.a_ns, x.b_ns) > std::max(y.a_ns, y.b_ns);
  });
  for (auto& [n, r] : PairByName(a.kernels, b.kernels, &KernelRow::count)) {
    if (r.status == "added") d.added.push_back(n);
    if (r.status == "removed") d.removed.push_back(n);
    finish(r);
    d.kernels.push_back(r);
  }
  std::sort(d.kernels.begin(), d.kernels.end(), [&](const DiffRow& x, const DiffRow& y) {
    if (lengths) return x.ns_per_unit_length.value_or(0) > y.ns_per_unit_length.value_or(0);
    auto cx = std::llabs(x.change_ns()), cy = std::llabs(y.change_ns());
    return cx != cy ? cx > cy : x.name < y.name;
  });
  if (a.window != b.window)
    d.warnings.push_back(fmt::format(
        "A and B are summarised over different windows ('{}' and '{}')",
        a.window.empty() ? "whole trace" : a.window, b.window.empty() ? "whole trace" : b.window));
  if (!a.window.empty() && a.instances.size() != b.instances.size())
    d.warnings.push_back(
        fmt::format("A has {} instances of '{}' and B has {}: totals differ by count; compare "
                    "per-instance numbers",
                    a.instances.size(), a.window, b.instances.size()));
  for (const auto& w : a.warnings) d.warnings.push_back("A: " + w);
  for (const auto& w : b.warnings) d.warnings.push_back("B: " + w);
  return d;
}

}  // namespace vouch::trace
