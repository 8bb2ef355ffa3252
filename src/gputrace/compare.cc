#include "gputrace/compare.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "stats/ab_stats.h"
#include "util/escape.h"

namespace vouch::gputrace {
namespace {

const RangeFigures* FindRange(const LegGpuTrace& g, const std::string& name) {
  for (const auto& r : g.ranges)
    if (r.name == name) return &r;
  return nullptr;
}

// One arm on the chosen basis: its multiset per unit when every leg agrees on it, the per-kernel
// means over legs, and the GPU-active time per unit (median over legs).
struct ArmBasis {
  std::optional<KernelMultiset> multiset;  // nullopt: the legs disagree
  std::vector<std::string> disagreements;
  std::vector<std::string> odd;  // legs whose first or last instances ran another mix
  std::map<std::string, KernelMean> per_kernel;
  double active_ns = 0;
  // On a range basis: the kernel mixes of all its legs' instances, with their instance counts.
  std::map<KernelMultiset, std::int64_t> mixes;
  std::int64_t instances = 0;
};

ArmBasis Fold(const std::vector<LegGpuTrace>& legs, const std::string& range,
              const std::string& label) {
  ArmBasis out;
  std::vector<double> active;
  std::optional<KernelMultiset> first;
  std::map<std::string, std::vector<std::string>> odd_by_text;  // finding -> legs
  bool agree = true;
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const auto& g = legs[i];
    KernelMultiset ms;
    if (!range.empty()) {
      const RangeFigures* r = FindRange(g, range);
      if (!r) continue;
      ms = r->modal;
      for (const auto& [k, m] : r->per_instance) {
        out.per_kernel[k].count += m.count;
        out.per_kernel[k].ns += m.ns;
      }
      active.push_back(r->median_ns);
      out.instances += r->instances;
      for (const auto& m : r->mixes) out.mixes[m.kernels] += m.instances;
      if (r->odd_instances > 0) {
        std::vector<std::string> odd;
        for (const auto& o : r->odd)
          odd.push_back(
              fmt::format("{} ({} kernel{})", o.instance, o.kernels, o.kernels == 1 ? "" : "s"));
        odd_by_text[fmt::format(
                        "{} of {} '{}' instances ran another kernel mix than the rest: "
                        "instance{} {}{}",
                        r->odd_instances, r->instances, range, odd.size() == 1 ? "" : "s",
                        fmt::join(odd, ", "),
                        r->odd_instances > static_cast<std::int64_t>(odd.size())
                            ? fmt::format(" and {} more",
                                          r->odd_instances - static_cast<std::int64_t>(odd.size()))
                            : std::string())]
            .push_back(std::to_string(i + 1));
      }
      if (r->modal_fraction < 0.5)
        out.disagreements.push_back(fmt::format(
            "arm {} leg {}: only {:.0f} % of the '{}' instances ran its most common kernel mix",
            label, i + 1, r->modal_fraction * 100, range));
    } else {
      for (const auto& [k, a] : g.by_kernel) {
        ms[k] = a.count;
        out.per_kernel[k].count += static_cast<double>(a.count);
        out.per_kernel[k].ns += static_cast<double>(a.total_ns);
      }
      active.push_back(static_cast<double>(g.active_ns));
    }
    if (!first) {
      first = ms;
    } else if (ms != *first) {
      agree = false;
    }
  }
  // One note per distinct finding, with the arm's legs (counted from 1 within the arm) it holds
  // for.
  for (const auto& [text, legs_of] : odd_by_text)
    out.odd.push_back(
        fmt::format("arm {} {}: {}; the counts below are the common mix's", label,
                    legs_of.size() == legs.size() && legs.size() > 1
                        ? fmt::format("(each of its {} traced legs)", legs.size())
                        : fmt::format("(its traced leg{} {})", legs_of.size() == 1 ? "" : "s",
                                      fmt::join(legs_of, ",")),
                    text));
  std::size_t n = active.size();
  for (auto& [k, m] : out.per_kernel) {
    m.count /= static_cast<double>(std::max<std::size_t>(n, 1));
    m.ns /= static_cast<double>(std::max<std::size_t>(n, 1));
  }
  if (auto med = Percentile(active, 50)) out.active_ns = *med;
  if (agree && first) out.multiset = first;
  if (!agree)
    out.disagreements.push_back(fmt::format(
        "arm {}: its legs ran different kernel multisets {}", label,
        range.empty() ? "over the measured region (a loop that runs for a time, not a count? mark "
                        "its step with an NVTX range)"
                      : fmt::format("per '{}' instance", range)));
  return out;
}

// A row's count per unit for arm A (or B): the stable multiset's whole count when both arms
// have one on a range basis, else the mean over legs and instances.
std::string RowCount(const GpuComparison& c, const KernelDiffRow& r, bool b);

std::string Count(double c) {
  return std::fabs(c - std::round(c)) < 1e-9 ? fmt::format("{:.0f}", c) : fmt::format("{:.2f}", c);
}

std::string Ns(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string Short(const std::string& name, std::size_t n = 70) {
  return name.size() <= n ? name : name.substr(0, n - 3) + "...";
}

std::string RowCount(const GpuComparison& c, const KernelDiffRow& r, bool b) {
  const KernelMultiset& ms = b ? c.b_multiset : c.a_multiset;
  if (!c.basis_range.empty() && !c.a_multiset.empty() && !c.b_multiset.empty())
    return fmt::format("{}", ms.count(r.name) ? ms.at(r.name) : 0);
  const auto& by_mix = b ? r.b_counts_by_mix : r.a_counts_by_mix;
  if (!by_mix.empty()) return by_mix;
  return Count(b ? r.b_count : r.a_count);
}

// A kernel's count per instance as the integers its arm's mixes hold, each with its share of
// the instances, most common first ("10 (85 %), 0 (15 %)"); "" when the arm has no mixes, or
// when the mixes kept do not cover 95 % of its instances (then the mean is shown).
std::string CountsByMix(const ArmBasis& a, const std::string& kernel) {
  if (a.mixes.empty() || a.instances <= 0) return "";
  std::map<std::int64_t, std::int64_t> by_count;  // count -> instances
  std::int64_t covered = 0;
  for (const auto& [ms, n] : a.mixes) {
    if (n <= 0) continue;
    auto it = ms.find(kernel);
    by_count[it == ms.end() ? 0 : it->second] += n;
    covered += n;
  }
  if (static_cast<double>(covered) < 0.95 * static_cast<double>(a.instances)) return "";
  if (by_count.size() == 1) return fmt::format("{}", by_count.begin()->first);
  std::vector<std::pair<std::int64_t, std::int64_t>> order(by_count.begin(), by_count.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<std::string> parts;
  for (const auto& [count, n] : order)
    parts.push_back(fmt::format("{} ({:.0f} %)", count,
                                100.0 * static_cast<double>(n) / static_cast<double>(a.instances)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string_view ToString(Identity i) {
  switch (i) {
    case Identity::kIdentity:
      return "identity";
    case Identity::kMoved:
      return "moved";
    case Identity::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string RangeOfMetric(const std::string& metric, const std::vector<LegGpuTrace>& legs) {
  std::string rest;
  for (const char* p : {"gpu.active_ns_per.", "gpu.kernels_per."})
    if (metric.rfind(p, 0) == 0) rest = metric.substr(std::string(p).size());
  if (rest.empty()) return "";
  const std::string suffix = ".spread_pct";
  for (const auto& g : legs)
    for (const auto& r : g.ranges) {
      std::string m = MetricSafe(r.name);
      if (rest == m || rest == m + suffix) return r.name;
    }
  return "";
}

Result<GpuComparison> CompareArms(const std::vector<LegGpuTrace>& a,
                                  const std::vector<LegGpuTrace>& b,
                                  const std::string& headline_range, const std::string& a_label,
                                  const std::string& b_label) {
  if (a.empty() || b.empty())
    return MakeError("no GPU trace for arm {}: no measured leg of it was traced",
                     a.empty() ? a_label : b_label);
  GpuComparison c;
  c.a_label = a_label;
  c.b_label = b_label;
  // The basis: the headline's range, else the common range with the most GPU time.
  std::string range = headline_range;
  if (!range.empty()) {
    bool in_a = std::all_of(a.begin(), a.end(), [&](const auto& g) { return FindRange(g, range); });
    bool in_b = std::all_of(b.begin(), b.end(), [&](const auto& g) { return FindRange(g, range); });
    if (!in_a || !in_b)
      return MakeError("NVTX range '{}' (the headline's) is missing from a traced leg of arm {}",
                       range, !in_a ? a_label : b_label);
  } else {
    std::map<std::string, double> weight;
    std::set<std::string> common;
    for (const auto& r : a.front().ranges) common.insert(r.name);
    for (const auto* arm : {&a, &b})
      for (const auto& g : *arm) {
        std::set<std::string> here;
        for (const auto& r : g.ranges) {
          here.insert(r.name);
          weight[r.name] += r.median_ns * static_cast<double>(r.instances);
        }
        std::set<std::string> keep;
        std::set_intersection(common.begin(), common.end(), here.begin(), here.end(),
                              std::inserter(keep, keep.begin()));
        common = std::move(keep);
      }
    double best = -1;
    for (const auto& n : common)
      if (weight[n] > best) {
        best = weight[n];
        range = n;
      }
  }
  c.basis_range = range;
  c.basis =
      range.empty() ? "per measured region" : fmt::format("per instance of NVTX range '{}'", range);
  ArmBasis fa = Fold(a, range, a_label);
  ArmBasis fb = Fold(b, range, b_label);
  c.notes = fa.disagreements;
  c.notes.insert(c.notes.end(), fb.disagreements.begin(), fb.disagreements.end());
  // Instances off the common mix, named, when the arms' mixes are stable (their counts then
  // print as whole numbers, never as a mean such as 7.94).
  if (fa.multiset && fb.multiset) {
    c.notes.insert(c.notes.end(), fa.odd.begin(), fa.odd.end());
    c.notes.insert(c.notes.end(), fb.odd.begin(), fb.odd.end());
  }
  for (const auto* arm : {&a, &b})
    for (const auto& g : *arm) {
      if (g.partial)
        c.notes.push_back("a traced leg's trace is partial (its process did not exit cleanly)");
      if (g.dropped > 0)
        c.notes.push_back(fmt::format(
            "a traced leg lost {} records (CUPTI drops): counts are lower bounds", g.dropped));
    }
  c.a_active_ns = fa.active_ns;
  c.b_active_ns = fb.active_ns;
  if (fa.multiset) c.a_multiset = *fa.multiset;
  if (fb.multiset) c.b_multiset = *fb.multiset;

  // Per-kernel rows.
  std::set<std::string> names;
  for (const auto& [k, m] : fa.per_kernel) names.insert(k);
  for (const auto& [k, m] : fb.per_kernel) names.insert(k);
  for (const auto& n : names) {
    KernelDiffRow row;
    row.name = n;
    if (auto it = fa.per_kernel.find(n); it != fa.per_kernel.end()) {
      row.a_count = it->second.count;
      row.a_ns = it->second.ns;
    }
    if (auto it = fb.per_kernel.find(n); it != fb.per_kernel.end()) {
      row.b_count = it->second.count;
      row.b_ns = it->second.ns;
    }
    c.a_kernel_ns += row.a_ns;
    c.b_kernel_ns += row.b_ns;
    row.a_counts_by_mix = CountsByMix(fa, n);
    row.b_counts_by_mix = CountsByMix(fb, n);
    // Counts per unit: the multisets when stable (exact), else the means.
    std::int64_t ca = c.a_multiset.count(n) ? c.a_multiset.at(n) : 0;
    std::int64_t cb = c.b_multiset.count(n) ? c.b_multiset.at(n) : 0;
    bool exact = fa.multiset && fb.multiset;
    bool in_a = exact ? ca > 0 : row.a_count > 0;
    bool in_b = exact ? cb > 0 : row.b_count > 0;
    bool count_differs = exact ? ca != cb : std::fabs(row.a_count - row.b_count) > 1e-9;
    // Absent from both common mixes (it ran only in odd instances): not added nor removed.
    row.status = !in_a && !in_b  ? "same"
                 : !in_a         ? "added"
                 : !in_b         ? "removed"
                 : count_differs ? "moved"
                                 : "same";
    c.rows.push_back(row);
    c.call_stats_a[n] = {static_cast<std::int64_t>(std::llround(row.a_count)), row.a_ns};
    c.call_stats_b[n] = {static_cast<std::int64_t>(std::llround(row.b_count)), row.b_ns};
  }
  double total = c.b_kernel_ns - c.a_kernel_ns;
  for (auto& r : c.rows)
    if (std::fabs(total) > 0) r.share_pct = r.delta_ns() / total * 100;
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const auto& x, const auto& y) {
    return std::fabs(x.delta_ns()) > std::fabs(y.delta_ns());
  });

  const std::string unit = range.empty() ? "per measured region" : "per instance";
  if (fa.multiset && fb.multiset) {
    if (*fa.multiset == *fb.multiset) {
      c.identity = Identity::kIdentity;
      std::int64_t total_k = 0;
      for (const auto& [k, n] : *fa.multiset) total_k += n;
      c.summary = fmt::format(
          "identity: arms {} and {} ran the same kernels, {} kernels of {} names, with equal "
          "counts {} "
          "({}); equal counts are identity: the change is not on the GPU, or it did not take "
          "effect",
          a_label, b_label, total_k, fa.multiset->size(), unit, c.basis);
    } else {
      c.identity = Identity::kMoved;
      for (const auto& r : c.rows) {
        std::int64_t ca = c.a_multiset.count(r.name) ? c.a_multiset.at(r.name) : 0;
        std::int64_t cb = c.b_multiset.count(r.name) ? c.b_multiset.at(r.name) : 0;
        if (ca != cb) c.moved.push_back(fmt::format("{}: {} -> {}", Short(r.name), ca, cb));
      }
      c.summary = fmt::format(
          "behavioural control moved: the kernel multiset {} differs in {} kernel name(s) ({})",
          c.basis, c.moved.size(),
          fmt::join(c.moved.begin(),
                    c.moved.begin() +
                        static_cast<std::ptrdiff_t>(std::min<std::size_t>(c.moved.size(), 3)),
                    "; "));
    }
  } else {
    c.identity = Identity::kUnknown;
    c.summary = fmt::format(
        "kernel multisets not compared: an arm's own legs disagree {} (see notes)", c.basis);
  }
  return c;
}

nlohmann::json ToJson(const GpuComparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"name", r.name},
                    {"status", r.status},
                    {"a_count", r.a_count},
                    {"b_count", r.b_count},
                    {"a_counts_by_mix", r.a_counts_by_mix},
                    {"b_counts_by_mix", r.b_counts_by_mix},
                    {"a_ns", r.a_ns},
                    {"b_ns", r.b_ns},
                    {"delta_ns", r.delta_ns()},
                    {"share_pct", r.share_pct ? nlohmann::json(*r.share_pct) : nlohmann::json()}});
  }
  return {{"basis", c.basis},
          {"basis_range", c.basis_range},
          {"identity", ToString(c.identity)},
          {"summary", c.summary},
          {"moved", c.moved},
          {"notes", c.notes},
          {"a",
           {{"label", c.a_label},
            {"multiset", c.a_multiset},
            {"kernel_ns", c.a_kernel_ns},
            {"active_ns", c.a_active_ns}}},
          {"b",
           {{"label", c.b_label},
            {"multiset", c.b_multiset},
            {"kernel_ns", c.b_kernel_ns},
            {"active_ns", c.b_active_ns}}},
          {"kernels", rows}};
}

std::string RenderComparisonText(const GpuComparison& c, const std::string& attribution,
                                 std::size_t max_rows) {
  std::string o;
  const std::string a_label = TerminalSafe(c.a_label), b_label = TerminalSafe(c.b_label);
  o += fmt::format("GPU: {}\n", TerminalSafe(c.summary));
  o += fmt::format("  {}\n", TerminalSafe(attribution));
  for (const auto& n : c.notes) o += fmt::format("  note: {}\n", TerminalSafe(n));
  double d = c.b_kernel_ns - c.a_kernel_ns;
  o += fmt::format("  GPU-active {}: {} {}, {} {}; kernel time {} {} -> {} ({}{})\n", c.basis,
                   a_label, Ns(c.a_active_ns), b_label, Ns(c.b_active_ns), a_label,
                   Ns(c.a_kernel_ns), Ns(c.b_kernel_ns), d >= 0 ? "+" : "", Ns(d));
  std::size_t shown = 0;
  std::string table;
  for (const auto& r : c.rows) {
    if (shown == max_rows) break;
    if (r.status == "same" && std::fabs(r.delta_ns()) < 1) continue;
    ++shown;
    table += fmt::format("  {:<8} {:>7} {:>7} {:>11} {:>11} {:>11} {:>7}  {}\n", r.status,
                         RowCount(c, r, false), RowCount(c, r, true), Ns(r.a_ns), Ns(r.b_ns),
                         (r.delta_ns() >= 0 ? "+" : "") + Ns(r.delta_ns()),
                         r.share_pct ? fmt::format("{:.1f}%", *r.share_pct) : "-",
                         TerminalSafe(Short(r.name)));
  }
  if (!table.empty())
    o += fmt::format("  {:<8} {:>7} {:>7} {:>11} {:>11} {:>11} {:>7}  {}\n", "kernel", "A n", "B n",
                     "A time", "B time", "change", "share", "name") +
         table;
  if (c.rows.size() > shown)
    o += fmt::format("  ({} more kernel name(s); the JSON record lists all)\n",
                     c.rows.size() - shown);
  return o;
}

std::string RenderComparisonMarkdown(const GpuComparison& c, const std::string& attribution,
                                     std::size_t max_rows) {
  std::string o = "### What ran on the GPU\n\n";
  o += fmt::format("**{}**\n\n_{}_\n\n", MarkdownCell(c.summary), MarkdownCell(attribution));
  for (const auto& n : c.notes) o += fmt::format("- note: {}\n", MarkdownCell(n));
  if (!c.notes.empty()) o += "\n";
  o += fmt::format("GPU-active {}: {} {}, {} {}.\n\n", c.basis, MarkdownCell(c.a_label),
                   Ns(c.a_active_ns), MarkdownCell(c.b_label), Ns(c.b_active_ns));
  o += "| status | A count | B count | A time | B time | change | share | kernel |\n";
  o += "|---|---:|---:|---:|---:|---:|---:|---|\n";
  std::size_t shown = 0;
  for (const auto& r : c.rows) {
    if (shown == max_rows) break;
    ++shown;
    std::string name = Short(r.name, 90);
    std::replace(name.begin(), name.end(), '|', '/');
    o += fmt::format("| {} | {} | {} | {} | {} | {}{} | {} | {} |\n", r.status,
                     RowCount(c, r, false), RowCount(c, r, true), Ns(r.a_ns), Ns(r.b_ns),
                     r.delta_ns() >= 0 ? "+" : "", Ns(r.delta_ns()),
                     r.share_pct ? fmt::format("{:.1f} %", *r.share_pct) : "-", MarkdownCode(name));
  }
  if (c.rows.size() > shown)
    o += fmt::format("\n{} more kernel name(s) in the JSON record.\n", c.rows.size() - shown);
  return o;
}

}  // namespace vouch::gputrace
