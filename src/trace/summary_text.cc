// The summary and diff as text and Markdown (what `vouch trace summarize|diff` print);
// summary.cc computes them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "trace/summary.h"
#include "util/escape.h"
#include "util/strings.h"

namespace vouch::trace {
namespace {

std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string Us(double ns) { return fmt::format("{:.1f} us", ns / 1e3); }

std::string Shorten(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 3) + "...";
}

template <class... A>
void Line(std::string& o, fmt::format_string<A...> f, A&&... a) {
  o += fmt::format(f, std::forward<A>(a)...);
  o += '\n';
}

}  // namespace

std::string RenderSummaryText(const Summary& s, std::size_t max_kernels) {
  std::string o;
  Line(o, "{} ({})", s.path, s.format);
  Line(o, "clock: {}", s.clock_window);
  if (s.window.empty())
    Line(o, "window: whole trace");
  else
    Line(o, "window: '{}', {} instance(s); {}", s.window, s.instances.size(), s.attribution);
  for (const auto& w : s.warnings) Line(o, "warning: {}", w);
  if (s.empty()) {
    Line(o, "no GPU work: nothing to summarise");
    return o;
  }
  const Figures& f = s.total;
  std::string scope = s.instances.empty() ? "" : " (sum over instances)";
  Line(o, "");
  Line(o, "elapsed                {}{}", Ms(static_cast<double>(f.elapsed_ns)), scope);
  Line(o, "GPU span               {}", Ms(static_cast<double>(f.gpu_span_ns)));
  Line(o, "kernel time            {} sum, {} union", Ms(static_cast<double>(f.kernel_sum_ns)),
       Ms(static_cast<double>(f.kernel_union_ns)));
  Line(o, "busy                   {:.2f} % of span", f.busy_percent());
  Line(o, "GPU operations         {} ({} kernels, {} copies, {} sets)", f.gpu_op_count,
       f.kernel_count, f.memcpy_count, f.memset_count);
  Line(o, "launch gaps            {} gaps, {} total, {} average, {} max", f.gaps.count,
       Us(static_cast<double>(f.gaps.total_ns)), Us(f.gaps.average_ns()),
       Us(static_cast<double>(f.gaps.max_ns)));
  Line(o,
       "launch API overlap     {} of {} launch-API time overlaps kernels ({:.2f} %, {} launches)",
       Ms(static_cast<double>(f.launch_api_overlap_ns)),
       Ms(static_cast<double>(f.launch_api_union_ns)), f.launch_overlap_percent(),
       f.launch_api_count);
  Line(o, "copies / sets          {} in {} copies ({}), {} in {} sets ({})",
       Us(static_cast<double>(f.memcpy_ns)), f.memcpy_count,
       HumanBytes(static_cast<double>(f.memcpy_bytes)), Us(static_cast<double>(f.memset_ns)),
       f.memset_count, HumanBytes(static_cast<double>(f.memset_bytes)));
  if (!s.instances.empty()) {
    double n = static_cast<double>(s.instances.size());
    Line(o, "per instance (mean)    {} elapsed, {} span, {} kernel sum, {:.1f} kernels",
         Ms(static_cast<double>(f.elapsed_ns) / n), Ms(static_cast<double>(f.gpu_span_ns) / n),
         Ms(static_cast<double>(f.kernel_sum_ns) / n), static_cast<double>(f.kernel_count) / n);
  }
  if (!s.instances.empty()) {
    Line(o, "");
    Line(o, "instances ({}{})", s.instances.size(),
         s.instances.size() > 40 ? ", first 40; --json has all" : "");
    Line(o, "  {:>5} {:>11} {:>11} {:>11} {:>8} {:>7}", "#", "elapsed", "GPU span", "kernel sum",
         "kernels", "busy");
    for (std::size_t i = 0; i < std::min<std::size_t>(40, s.instances.size()); ++i) {
      const Figures& g = s.instances[i].figures;
      Line(o, "  {:>5} {:>11} {:>11} {:>11} {:>8} {:>6.1f}%", s.instances[i].index,
           Ms(static_cast<double>(g.elapsed_ns)), Ms(static_cast<double>(g.gpu_span_ns)),
           Ms(static_cast<double>(g.kernel_sum_ns)), g.kernel_count, g.busy_percent());
    }
  }
  Line(o, "");
  Line(o, "components (rules: {})", s.rules_source);
  Line(o, "  {:<16} {:>12} {:>8} {:>9}", "component", "time", "share", "launches");
  for (const auto& c : s.components)
    Line(o, "  {:<16} {:>12} {:>7.2f}% {:>9}", c.name, Ms(static_cast<double>(c.total_ns)),
         c.percent_of_kernel_time, c.launches);
  Line(o, "");
  Line(o, "bottleneck ranking");
  int rank = 0;
  for (const auto& r : s.ranking) {
    if (r.percent_of_kernel_time)
      Line(o, "  {}. {:<16} {:>12} {:6.2f} % of kernel time", ++rank, r.name,
           Ms(static_cast<double>(r.total_ns)), *r.percent_of_kernel_time);
    else
      Line(o, "  {}. {} {} {:.2f} % of span", ++rank, r.name, Ms(static_cast<double>(r.total_ns)),
           r.percent_of_span);
  }
  Line(o, "");
  Line(o, "kernels (top {} of {}; mixture: max >= {}x median)",
       std::min(max_kernels, s.kernels.size()), s.kernels.size(), kMixtureMaxOverMedian);
  Line(o, "  {:>6} {:>11} {:>6} {:>10} {:>10} {:>10} {:>10}  {}", "count", "total", "share", "mean",
       "median", "min", "max", "name");
  for (std::size_t i = 0; i < std::min(max_kernels, s.kernels.size()); ++i) {
    const auto& k = s.kernels[i];
    Line(o, "  {:>6} {:>11} {:>5.1f}% {:>10} {:>10} {:>10} {:>10}  {}{}", k.count,
         Ms(static_cast<double>(k.total_ns)), k.percent_of_kernel_time, Us(k.mean_ns),
         Us(k.median_ns), Us(static_cast<double>(k.min_ns)), Us(static_cast<double>(k.max_ns)),
         k.mixture ? "[mixture] " : "", Shorten(k.name, 90));
  }
  if (!s.unknown_categories.empty() || !s.skipped_by_category.empty()) {
    std::int64_t skipped = 0;
    for (const auto& [k, v] : s.skipped_by_category) skipped += v;
    Line(o, "");
    Line(o, "{} event(s) not used (cpu_op, flows, metadata, ...); --json lists them by category",
         skipped);
  }
  return o;
}

std::string RenderSummaryMarkdown(const Summary& s, std::size_t max_kernels) {
  std::string o;
  Line(o, "**vouch trace summarize**: {} ({}), {}", MarkdownCode(s.path), MarkdownCell(s.format),
       s.window.empty()
           ? std::string("whole trace")
           : fmt::format("window {}, {} instance(s)", MarkdownCode(s.window), s.instances.size()));
  Line(o, "");
  Line(o, "clock: {}", MarkdownCell(s.clock_window));
  for (const auto& w : s.warnings) Line(o, "\n> warning: {}", MarkdownCell(w));
  if (s.empty()) {
    Line(o, "");
    Line(o, "No GPU work: nothing to summarise.");
    return o;
  }
  const Figures& f = s.total;
  Line(o, "");
  Line(o, "| {} | value |", s.instances.empty() ? "whole trace" : "sum over instances");
  Line(o, "|---|---:|");
  Line(o, "| elapsed | {} |", Ms(static_cast<double>(f.elapsed_ns)));
  Line(o, "| GPU span | {} |", Ms(static_cast<double>(f.gpu_span_ns)));
  Line(o, "| kernel time (sum) | {} |", Ms(static_cast<double>(f.kernel_sum_ns)));
  Line(o, "| kernel time (union) | {} |", Ms(static_cast<double>(f.kernel_union_ns)));
  Line(o, "| busy | {:.2f} % of span |", f.busy_percent());
  Line(o, "| GPU operations | {} ({} kernels, {} copies, {} sets) |", f.gpu_op_count,
       f.kernel_count, f.memcpy_count, f.memset_count);
  Line(o, "| launch gaps | {} gaps, {} total, {} max |", f.gaps.count,
       Us(static_cast<double>(f.gaps.total_ns)), Us(static_cast<double>(f.gaps.max_ns)));
  Line(o, "");
  Line(o, "Components (rules: {})", MarkdownCell(s.rules_source));
  Line(o, "");
  Line(o, "| component | time | share | launches |");
  Line(o, "|---|---:|---:|---:|");
  for (const auto& c : s.components)
    Line(o, "| {} | {} | {:.2f} % | {} |", MarkdownCell(c.name),
         Ms(static_cast<double>(c.total_ns)), c.percent_of_kernel_time, c.launches);
  Line(o, "");
  Line(o, "Bottleneck ranking");
  Line(o, "");
  int rank = 0;
  for (const auto& r : s.ranking) {
    if (r.percent_of_kernel_time)
      Line(o, "{}. {}: {}, {:.2f} % of kernel time", ++rank, MarkdownCell(r.name),
           Ms(static_cast<double>(r.total_ns)), *r.percent_of_kernel_time);
    else
      Line(o, "{}. {}: {}, {:.2f} % of span", ++rank, MarkdownCell(r.name),
           Ms(static_cast<double>(r.total_ns)), r.percent_of_span);
  }
  Line(o, "");
  Line(o, "Kernels (top {} of {})", std::min(max_kernels, s.kernels.size()), s.kernels.size());
  Line(o, "");
  Line(o, "| count | total | share | mean | median | max | name |");
  Line(o, "|---:|---:|---:|---:|---:|---:|---|");
  for (std::size_t i = 0; i < std::min(max_kernels, s.kernels.size()); ++i) {
    const auto& k = s.kernels[i];
    Line(o, "| {} | {} | {:.1f} % | {} | {} | {} | {}{} |", k.count,
         Ms(static_cast<double>(k.total_ns)), k.percent_of_kernel_time, Us(k.mean_ns),
         Us(k.median_ns), Us(static_cast<double>(k.max_ns)), k.mixture ? "[mixture] " : "",
         MarkdownCode(Shorten(k.name, 120)));
  }
  return o;
}

namespace {

// A change in percent; 0 -> 0 is "unchanged" and only 0 -> something is "new".
std::string PercentCell(double a, double b, std::optional<double> pct) {
  if (pct) return fmt::format("{:+.2f} %", *pct);
  return a == b ? "unchanged" : "new";
}

// A headline figure in its unit: durations in ns, s or min, counts whole, shares in %.
std::string HeadlineValue(const std::string& name, double v, bool sign = false) {
  const bool ns = name.size() > 3 && name.compare(name.size() - 3, 3, "_ns") == 0;
  const bool percent = name.find("percent") != std::string::npos;
  // A change of a share is in percentage points, not percent of the share.
  std::string body = ns        ? HumanDuration(std::fabs(v) / 1e9)
                     : percent ? fmt::format("{:.1f} {}", std::fabs(v), sign ? "pp" : "%")
                               : fmt::format("{:.0f}", std::fabs(v));
  if (v < 0) return "-" + body;
  return sign && v > 0 ? "+" + body : body;
}

struct HeadlineCells {
  std::string name, a, b, change, pct;
};
HeadlineCells Cells(const HeadlineRow& r) {
  return {r.name, HeadlineValue(r.name, r.a), HeadlineValue(r.name, r.b),
          HeadlineValue(r.name, r.change(), true), PercentCell(r.a, r.b, r.percent_change())};
}
std::string RowPercent(const DiffRow& r) {
  return PercentCell(static_cast<double>(r.a_ns), static_cast<double>(r.b_ns), r.percent_change());
}

}  // namespace

std::string RenderDiffText(const Diff& d, std::size_t max_kernels) {
  std::string o;
  Line(o, "A: {}  ({})", d.a.path, d.a.window.empty() ? "whole trace" : "window " + d.a.window);
  Line(o, "   clock: {}", d.a.clock_window);
  Line(o, "B: {}  ({})", d.b.path, d.b.window.empty() ? "whole trace" : "window " + d.b.window);
  Line(o, "   clock: {}", d.b.clock_window);
  if (d.length_a) Line(o, "two lengths: A at {}, B at {}", *d.length_a, *d.length_b);
  for (const auto& w : d.warnings) Line(o, "warning: {}", w);
  Line(o, "");
  Line(o, "  {:<22} {:>16} {:>16} {:>16} {:>10}", "", "A", "B", "change", "");
  for (const auto& r : d.headline) {
    auto c = Cells(r);
    Line(o, "  {:<22} {:>16} {:>16} {:>16} {:>10}", c.name, c.a, c.b, c.change, c.pct);
  }
  auto table = [&](const char* title, const std::vector<DiffRow>& v, std::size_t limit) {
    Line(o, "");
    Line(o, "{}", title);
    if (d.length_a)
      Line(o, "  {:>12} {:>12} {:>12} {:>10} {:>14} {:>8}  {}", "A", "B", "change", "",
           "ns/unit len", "growth", "name");
    else
      Line(o, "  {:>12} {:>12} {:>12} {:>10} {:>7} {:>7}  {}", "A", "B", "change", "", "A n", "B n",
           "name");
    for (std::size_t i = 0; i < std::min(limit, v.size()); ++i) {
      const auto& r = v[i];
      if (d.length_a)
        Line(o, "  {:>12} {:>12} {:>12} {:>10} {:>14.1f} {:>8}  {}",
             Ms(static_cast<double>(r.a_ns)), Ms(static_cast<double>(r.b_ns)),
             Ms(static_cast<double>(r.change_ns())), RowPercent(r),
             r.ns_per_unit_length.value_or(0), r.growth, Shorten(r.name, 80));
      else
        Line(o, "  {:>12} {:>12} {:>12} {:>10} {:>7} {:>7}  {}{}", Ms(static_cast<double>(r.a_ns)),
             Ms(static_cast<double>(r.b_ns)), Ms(static_cast<double>(r.change_ns())), RowPercent(r),
             r.a_count, r.b_count, r.status == "both" ? "" : "[" + r.status + "] ",
             Shorten(r.name, 80));
    }
  };
  table("components", d.components, d.components.size());
  table(d.length_a ? "kernels (by growth per unit length)" : "kernels (by absolute change)",
        d.kernels, max_kernels);
  Line(o, "");
  Line(o, "{} kernel(s) added, {} removed", d.added.size(), d.removed.size());
  for (const auto& n : d.added) Line(o, "  + {}", Shorten(n, 100));
  for (const auto& n : d.removed) Line(o, "  - {}", Shorten(n, 100));
  return o;
}

std::string RenderDiffMarkdown(const Diff& d, std::size_t max_kernels) {
  std::string o;
  auto side = [](const Summary& s) {
    return fmt::format("{} ({})", MarkdownCode(s.path),
                       s.window.empty() ? "whole trace" : "window " + MarkdownCode(s.window));
  };
  Line(o, "**vouch trace diff**: A {} against B {}", side(d.a), side(d.b));
  Line(o, "");
  if (d.length_a) {
    Line(o, "Two lengths: A at {}, B at {}.", *d.length_a, *d.length_b);
    Line(o, "");
  }
  for (const auto& w : d.warnings) Line(o, "> warning: {}", MarkdownCell(w));
  if (!d.warnings.empty()) Line(o, "");
  Line(o, "| | A | B | change | % |");
  Line(o, "|---|---:|---:|---:|---:|");
  for (const auto& r : d.headline) {
    auto c = Cells(r);
    Line(o, "| {} | {} | {} | {} | {} |", MarkdownCell(c.name), c.a, c.b, c.change, c.pct);
  }
  auto table = [&](const std::string& title, const std::vector<DiffRow>& v, std::size_t limit) {
    Line(o, "");
    Line(o, "{}", title);
    Line(o, "");
    if (d.length_a) {
      Line(o, "| name | A | B | change | % | ns/unit len | growth |");
      Line(o, "|---|---:|---:|---:|---:|---:|---|");
    } else {
      Line(o, "| name | A | B | change | % | A n | B n |");
      Line(o, "|---|---:|---:|---:|---:|---:|---:|");
    }
    for (std::size_t i = 0; i < std::min(limit, v.size()); ++i) {
      const auto& r = v[i];
      std::string name =
          MarkdownCode(Shorten(r.name, 120)) + (r.status == "both" ? "" : " (" + r.status + ")");
      std::string a = Ms(static_cast<double>(r.a_ns)), b = Ms(static_cast<double>(r.b_ns)),
                  ch = Ms(static_cast<double>(r.change_ns()));
      if (d.length_a)
        Line(o, "| {} | {} | {} | {} | {} | {:.1f} | {} |", name, a, b, ch, RowPercent(r),
             r.ns_per_unit_length.value_or(0), r.growth);
      else
        Line(o, "| {} | {} | {} | {} | {} | {} | {} |", name, a, b, ch, RowPercent(r), r.a_count,
             r.b_count);
    }
  };
  table("Components", d.components, d.components.size());
  table(fmt::format("Kernels (top {} of {}, {})", std::min(max_kernels, d.kernels.size()),
                    d.kernels.size(),
                    d.length_a ? "by growth per unit length" : "by absolute change"),
        d.kernels, max_kernels);
  if (!d.added.empty() || !d.removed.empty()) {
    Line(o, "");
    Line(o, "<details><summary>{} kernel(s) added, {} removed</summary>", d.added.size(),
         d.removed.size());
    Line(o, "");
    for (const auto& n : d.added) Line(o, "- added {}", MarkdownCode(Shorten(n, 200)));
    for (const auto& n : d.removed) Line(o, "- removed {}", MarkdownCode(Shorten(n, 200)));
    Line(o, "");
    Line(o, "</details>");
  }
  return o;
}

}  // namespace vouch::trace
