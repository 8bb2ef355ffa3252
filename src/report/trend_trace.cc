// The report pages of a metric's trend and of a trace summary.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "report/page.h"
#include "report/report.h"
#include "report/trend_layout.h"
#include "util/json_io.h"
#include "util/median.h"
#include "util/value_format.h"

namespace vouch {
namespace {

using namespace report_page;  // NOLINT: the page helpers

// A trace's bottleneck ranking, the top finding first ("GPU idle 69.0 % of the span"), and
// its warnings.
std::string TraceFindings(const json& sum) {
  const auto& rk = At(sum, "bottleneck_ranking");
  std::string out;
  auto line = [](const json& r) {
    const double ms = Dbl(r, "milliseconds");
    if (Str(r, "kind") == "gpu_idle")
      return fmt::format("GPU idle {:.1f} % of the span ({:.3f} ms with no kernel running)",
                         Dbl(r, "percent_of_span"), ms);
    return fmt::format("{} {:.1f} % of kernel time ({:.3f} ms, {:.1f} % of the span)",
                       HtmlEscape(Str(r, "name")), Dbl(r, "percent_of_kernel_time"), ms,
                       Dbl(r, "percent_of_span"));
  };
  if (rk.is_array() && !rk.empty()) {
    out += fmt::format(
        "<section class=\"findings\"><h2>Top finding: <span id=\"top-finding\">{}</span></h2>\n"
        "<ol class=\"ranking\">\n",
        line(rk[0]));
    for (const auto& r : rk) out += fmt::format("<li>{}</li>\n", line(r));
    out += "</ol>\n";
  }
  if (At(sum, "warnings").is_array())
    for (const auto& w : sum["warnings"])
      if (w.is_string())
        out +=
            fmt::format("<p class=\"reason\">warning: {}</p>\n", HtmlEscape(w.get<std::string>()));
  if (!out.empty() && rk.is_array() && !rk.empty()) out += "</section>\n";
  return out;
}

}  // namespace

Result<std::string> RenderTrendReport(const TrendSeries& s, const ReportAssets& a) {
  if (auto st = NeedUplot(a); !st) return st.error();
  Page p;
  p.title = fmt::format("vouch trend: {}", s.metric);
  p.body += fmt::format(
      "<header><h1>vouch trend: <code>{}</code></h1>\n<p class=\"meta\">{} points per {}, arm {}, "
      "{} is better; GPUs: {}</p>\n</header>\n",
      HtmlEscape(s.metric), s.points.size(), TrendByName(s.by), HtmlEscape(s.arm),
      HtmlEscape(s.better.empty() ? "?" : s.better),
      HtmlEscape(s.gpus.empty() ? "none" : fmt::format("{}", fmt::join(s.gpus, ", "))));
  p.body += "<section class=\"verdict\"><h2>Steps: <span id=\"verdict\">";
  if (!s.mixed.empty())
    p.body += "not reported</span></h2>\n";
  else if (!s.steps_searched)
    p.body += "not looked for</span></h2>\n";
  else if (!TrendTooShort(s).empty())
    p.body += fmt::format(
        "series too short</span></h2>\n<p class=\"reason\">The series is {}: no step "
        "can be found yet, so none is reported.</p>\n",
        HtmlEscape(TrendTooShort(s)));
  else
    p.body += fmt::format("{} found</span></h2>\n", s.steps.size());
  for (const auto& m : s.mixed)
    p.body += fmt::format("<p class=\"reason\">{}</p>\n", HtmlEscape(m));
  if (!s.steps.empty()) {
    p.body +=
        "<table><tr><th>step "
        "between</th><th>before</th><th>after</th><th>change</th><th>p</th></tr>\n";
    for (const auto& st : s.steps)
      p.body += fmt::format(
          "<tr><td><code>{}</code> .. <code>{}</code></td><td>{}</td><td>{}</td><td>{:+.2f} "
          "%</td><td>{:.3f}</td></tr>\n",
          HtmlEscape(st.before), HtmlEscape(st.after), FormatValue(st.before_value, s.unit),
          FormatValue(st.after_value, s.unit), st.size_pct, st.p_value);
    p.body += "</table>\n";
  }
  p.body +=
      "<p class=\"legend\">E-Divisive means (Matteson &amp; James 2014) with a permutation "
      "test (under 30 points: the largest two-sample t, Bonferroni over the splits); red lines: "
      "the steps; filled points: attributed (a valid clock window); hollow grey "
      "points: unattributed.</p>\n</section>\n";
  // Beyond what a chart can show (issue 37: 100,000 points took 48 s to open), the points are
  // drawn in buckets of K: each bucket's median, lowest and highest; the table lists the points
  // around each step and the latest ones (TrendPageLayout).
  const TrendPageLayout layout = LayOutTrendPage(s.points.size(), s.steps);
  const size_t k = layout.bucket;
  json x = json::array(), v = json::array(), u = json::array(), labels = json::array();
  json lo = json::array(), hi = json::array();
  bool any_unattributed = false;
  for (size_t b = 0; b * k < s.points.size(); ++b) {
    std::vector<double> att, un;
    for (size_t i = b * k; i < std::min(s.points.size(), (b + 1) * k); ++i)
      (s.points[i].attributed ? att : un).push_back(s.points[i].value);
    x.push_back(b);
    labels.push_back(s.points[b * k].label);
    v.push_back(att.empty() ? json() : json(MedianOf(att)));
    u.push_back(un.empty() ? json() : json(MedianOf(un)));
    any_unattributed = any_unattributed || !un.empty();
    if (k > 1) {
      lo.push_back(att.empty() ? json() : json(*std::min_element(att.begin(), att.end())));
      hi.push_back(att.empty() ? json() : json(*std::max_element(att.begin(), att.end())));
    }
  }
  json vlines = json::array();
  for (const auto& st : s.steps)
    vlines.push_back({{"x", static_cast<double>(st.index) / static_cast<double>(k) - 0.5},
                      {"label", fmt::format("{:+.1f} %", st.size_pct)}});
  const std::string unit = s.unit.empty() ? "" : " (" + s.unit + ")";
  json series = json::array({{{"label", s.metric + unit + (k > 1 ? ", bucket median" : "")},
                              {"values", v},
                              {"color", kClock},
                              {"points", true},
                              {"hollow", false},
                              {"line", true}}});
  if (k > 1) {
    series.push_back({{"label", "bucket lowest"}, {"values", lo}, {"color", "#9ecae1"}});
    series.push_back({{"label", "bucket highest"}, {"values", hi}, {"color", "#9ecae1"}});
  }
  if (s.unattributed > 0 && any_unattributed)
    series.push_back({{"label", "unattributed"},
                      {"values", u},
                      {"color", "#999"},
                      {"points", true},
                      {"hollow", true}});
  if (k > 1)
    p.body += fmt::format(
        "<p class=\"legend\" id=\"aggregated\">{} points, drawn as {} buckets of {} "
        "consecutive points: the line is each bucket's median, the light lines its lowest and "
        "highest. Every point: <code>vouch history trend {} --json</code>.</p>\n",
        FormatValue(static_cast<double>(s.points.size())), x.size(), k, HtmlEscape(s.metric));
  p.body += "<section>\n" +
            p.Chart("trend", fmt::format("{} per {}", s.metric, TrendByName(s.by)), x, series,
                    {{"vlines", vlines}},
                    {{"xlabels", labels}, {"xlabel", std::string(TrendByName(s.by))}}) +
            "</section>\n";
  p.body += fmt::format(
      "<section><h2>Points</h2><table><tr><th>{}</th><th>value</th><th>runs</th><th>SM "
      "clock</th></tr>\n",
      TrendByName(s.by));
  size_t next = 0;
  for (const auto& [from, to] : layout.rows) {
    if (from > next)
      p.body += fmt::format(
          "<tr class=\"gap\"><td colspan=\"4\">&hellip; {} points not listed &hellip;</td></tr>\n",
          FormatValue(static_cast<double>(from - next)));
    for (size_t i = from; i < to; ++i) {
      const auto& pt = s.points[i];
      p.body += fmt::format(
          "<tr class=\"{}\"><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
          pt.attributed ? "" : "warn", HtmlEscape(pt.label), pt.dirty ? " (dirty)" : "",
          FormatValue(pt.value, s.unit), pt.run_keys.size(),
          pt.clock_sm_median_mhz ? fmt::format("{:.0f} MHz", *pt.clock_sm_median_mhz) : "n/a");
    }
    next = to;
  }
  p.body += "</table></section>\n";
  return p.Html(a);
}

Result<std::string> RenderTraceReport(const json& sum, const ReportAssets& a) {
  if (auto st = NeedUplot(a); !st) return st.error();
  const auto& comps = At(sum, "components");
  const auto& kernels = At(sum, "kernels");
  if (!comps.is_object() || !kernels.is_array())
    return MakeError(
        "not a trace summary (vouch trace summarize --json): no components or kernels");
  Page p;
  p.title = fmt::format("vouch trace report: {}", Str(sum, "path"));
  p.body += fmt::format(
      "<header><h1>vouch trace report</h1>\n<p class=\"meta\"><code>{}</code> ({}), window {}; "
      "{}</p>\n</header>\n",
      HtmlEscape(Str(sum, "path")), HtmlEscape(Str(sum, "format")),
      HtmlEscape(At(sum, "window").is_string() ? sum["window"].get<std::string>() : "whole trace"),
      HtmlEscape(At(sum, "attribution").is_string() ? sum["attribution"].get<std::string>()
                                                    : "unattributed"));
  p.body += TraceFindings(sum);
  std::vector<std::pair<std::string, json>> rows;
  for (const auto& [k, v] : comps.items()) rows.emplace_back(k, v);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return Dbl(x.second, "total_ns") > Dbl(y.second, "total_ns");
  });
  p.body += fmt::format(
      "<section class=\"verdict\"><h2>Components: <span id=\"verdict\">{} components</span></h2>\n"
      "<table><tr><th>component</th><th>ms</th><th>share</th><th>launches</th><th>top "
      "kernel</th></tr>\n",
      rows.size());
  json x = json::array(), ms = json::array(), labels = json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [name, c] = rows[i];
    p.body +=
        fmt::format("<tr><td>{}</td><td>{:.3f}</td><td>{:.1f} %</td><td>{}</td><td>{}</td></tr>\n",
                    HtmlEscape(name), Dbl(c, "milliseconds"), Dbl(c, "percent_of_kernel_time"),
                    HtmlEscape(DumpJson(At(c, "launches"))), HtmlEscape(Str(c, "top_kernel")));
    x.push_back(i);
    ms.push_back(Dbl(c, "milliseconds"));
    labels.push_back(name);
  }
  p.body += "</table>\n";
  p.body +=
      p.Chart("components", "kernel time per component (ms)", x,
              json::array({{{"label", "ms"}, {"values", ms}, {"color", kClock}, {"bars", true}}}),
              json::object(), {{"xlabels", labels}, {"xlabel", "component"}});
  p.body +=
      "</section>\n<section><h2>Kernels</h2><table><tr><th>kernel</th><th>component</th><th>count</"
      "th>"
      "<th>total ms</th><th>share</th><th>median us</th></tr>\n";
  size_t shown = 0;
  for (const auto& k : kernels) {
    if (++shown > 50) break;
    p.body += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.1f} "
        "%</td><td>{:.2f}</td></tr>\n",
        HtmlEscape(Str(k, "name")), HtmlEscape(Str(k, "component")),
        HtmlEscape(DumpJson(At(k, "count"))), Dbl(k, "total_ns") / 1e6,
        Dbl(k, "percent_of_kernel_time"), Dbl(k, "median_ns") / 1e3);
  }
  p.body += "</table></section>\n";
  return p.Html(a);
}

}  // namespace vouch
