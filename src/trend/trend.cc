#include "trend/trend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "util/escape.h"
#include "util/median.h"
#include "util/value_format.h"

namespace vouch {
namespace {

constexpr const char* kExactMethod =
    "E-Divisive means (Matteson & James 2014), permutation test; segments under 30 points: the "
    "largest two-sample t, Bonferroni over the splits";

}  // namespace

std::string_view TrendByName(TrendBy b) {
  switch (b) {
    case TrendBy::kCommit:
      return "commit";
    case TrendBy::kDay:
      return "day";
    case TrendBy::kRun:
      return "run";
  }
  return "?";
}

TrendSeries BuildTrend(const std::vector<TrendPoint>& pts, const TrendQuery& q, TrendBy by) {
  TrendBuilder b(q, by);
  for (const auto& p : pts) b.Add(TrendRowOf(p));
  return b.Finish();
}

void MarkMixedTrend(TrendSeries& s) {
  // Like with like, or no step: a step between two GPUs or two clock states is the
  // hardware's, not the commit's.
  if (s.gpus.size() > 1)
    s.mixed.push_back(fmt::format(
        "the series mixes {} GPUs ({}): a step between them would be the hardware's; filter "
        "with --gpu",
        s.gpus.size(), fmt::join(s.gpus, ", ")));
  std::vector<double> c;
  for (size_t i = 0; i < s.points.size(); ++i)
    if (auto clock = s.points.clock_sm_median_mhz(i)) c.push_back(*clock);
  if (!c.empty()) {
    auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    double med = MedianOf(c);
    if (med > 0 && (*hi - *lo) / med * 100 > kTrendClockStatePct)
      s.mixed.push_back(fmt::format(
          "the series mixes clock states (SM clock medians {:.0f} .. {:.0f} MHz, {:.1f} % apart, "
          "more than {:.0f} %): a step could be the clock's; filter with --gpu/--host or lock "
          "clocks",
          *lo, *hi, (*hi - *lo) / med * 100, kTrendClockStatePct));
  }
  if (s.unattributed > 0)
    s.mixed.push_back(fmt::format(
        "{} of {} points are unattributed (no valid clock window): steps are looked for over "
        "clock-attributed points only",
        s.unattributed, s.points.size()));
}

void DetectSteps(TrendSeries& s, const EDivisiveOptions& o) {
  s.method = static_cast<long>(s.points.size()) > o.exact_max_points
                 ? fmt::format(
                       "E-Divisive means in windows of {} points (Apache Otava's form), Welch's "
                       "t-test, Bonferroni over the segment's splits",
                       o.window)
                 : kExactMethod;
  s.steps.clear();
  s.steps_searched = false;
  if (!s.mixed.empty()) return;
  s.steps_searched = true;
  s.min_points_for_step = MinStepSeriesLength(o);
  s.significance = o.significance;
  const std::vector<double>& v = s.points.values();
  auto cps = EDivisive(v, o);
  for (size_t k = 0; k < cps.size(); ++k) {
    int i = cps[k].index;
    int from = k == 0 ? 0 : cps[k - 1].index;
    int to = k + 1 < cps.size() ? cps[k + 1].index : static_cast<int>(v.size());
    Step st;
    st.index = i;
    st.before = s.points.label(static_cast<size_t>(i - 1));
    st.after = s.points.label(static_cast<size_t>(i));
    st.before_value = MedianOf(std::vector<double>(v.begin() + from, v.begin() + i));
    st.after_value = MedianOf(std::vector<double>(v.begin() + i, v.begin() + to));
    st.size_pct = st.before_value != 0 ? (st.after_value / st.before_value - 1) * 100 : 0;
    st.p_value = cps[k].p_value;
    s.steps.push_back(st);
  }
}

std::string TrendTooShort(const TrendSeries& s) {
  if (!s.steps_searched || !s.steps.empty() ||
      static_cast<int>(s.points.size()) >= s.min_points_for_step)
    return "";
  return fmt::format(
      "too short to find a step reliably ({} points; at p <= {:g} the test needs at least {})",
      s.points.size(), s.significance, s.min_points_for_step);
}

namespace {

std::string StepWord(const TrendSeries& s, const Step& st) {
  bool up = st.size_pct > 0;
  if (s.better == "higher") return up ? "better" : "worse";
  if (s.better == "lower") return up ? "worse" : "better";
  return up ? "up" : "down";
}

}  // namespace

std::string RenderTrendText(const TrendSeries& s) {
  std::string out =
      fmt::format("trend of {} ({}, {} is better) per {}, arm {}: {} points\n",
                  TerminalSafe(s.metric), s.unit.empty() ? "no unit" : TerminalSafe(s.unit),
                  s.better.empty() ? "?" : TerminalSafe(s.better), TrendByName(s.by),
                  TerminalSafe(s.arm), s.points.size());
  if (s.points.empty()) {
    out += "  no stored run has this metric (vouch history list shows what is stored)\n";
    return out;
  }
  const SeriesPointList& pts = s.points;
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto clock = pts.clock_sm_median_mhz(i);
    out += fmt::format("  {:<12} {:>14}  runs {:<3} {}{}{}\n", TerminalSafe(pts.label(i)),
                       FormatValue(pts.value(i), s.unit), pts.run_count(i),
                       clock ? fmt::format("SM {:.0f} MHz", *clock) : std::string("no clock"),
                       pts.attributed(i) ? "" : "  UNATTRIBUTED", pts.dirty(i) ? "  dirty" : "");
  }
  for (const auto& m : s.mixed) out += fmt::format("no steps reported: {}\n", TerminalSafe(m));
  if (s.steps_searched) {
    if (!TrendTooShort(s).empty())
      out += fmt::format("steps: none can be found yet: the series is {}\n", TrendTooShort(s));
    else if (s.steps.empty())
      out += "steps: none found (E-Divisive means: permutation test, t test under 30 points)\n";
    for (const auto& st : s.steps)
      out += fmt::format("step between {} and {}: {} -> {} ({:+.2f} %, {}), p = {:.3f}\n",
                         TerminalSafe(st.before), TerminalSafe(st.after),
                         FormatValue(st.before_value, s.unit), FormatValue(st.after_value, s.unit),
                         st.size_pct, StepWord(s, st), st.p_value);
  }
  return out;
}

std::string RenderTrendMarkdown(const TrendSeries& s) {
  std::string out = fmt::format("### vouch trend: {} per {} ({} points)\n\n",
                                MarkdownCode(s.metric), TrendByName(s.by), s.points.size());
  for (const auto& m : s.mixed)
    out += fmt::format("> **No steps reported:** {}\n\n", MarkdownCell(m));
  if (s.steps_searched) {
    if (!TrendTooShort(s).empty()) {
      out += fmt::format("No step can be found yet: the series is {}.\n\n", TrendTooShort(s));
    } else if (s.steps.empty()) {
      out += "No step found (E-Divisive means: permutation test, t test under 30 points).\n\n";
    } else {
      out += "| step between | before | after | change | p |\n|---|---:|---:|---:|---:|\n";
      for (const auto& st : s.steps)
        out += fmt::format(
            "| {} .. {} | {} | {} | {:+.2f} % ({}) | {:.3f} |\n", MarkdownCode(st.before),
            MarkdownCode(st.after), FormatValue(st.before_value, s.unit),
            FormatValue(st.after_value, s.unit), st.size_pct, StepWord(s, st), st.p_value);
      out += "\n";
    }
  }
  out += fmt::format("| {} | {} ({}) | runs | SM clock |\n|---|---:|---:|---:|\n",
                     TrendByName(s.by), MarkdownCell(s.metric), MarkdownCell(s.unit));
  const SeriesPointList& pts = s.points;
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto clock = pts.clock_sm_median_mhz(i);
    out += fmt::format("| {}{} | {}{} | {} | {} |\n", MarkdownCode(pts.label(i)),
                       pts.dirty(i) ? " (dirty)" : "", FormatValue(pts.value(i), s.unit),
                       pts.attributed(i) ? "" : " (unattributed)", pts.run_count(i),
                       clock ? fmt::format("{:.0f} MHz", *clock) : std::string("n/a"));
  }
  return out;
}

nlohmann::json TrendJson(const TrendSeries& s, bool with_points) {
  nlohmann::json pts = nlohmann::json::array(), steps = nlohmann::json::array();
  if (!with_points) pts = nullptr;
  for (const auto& p : s.points) {
    if (!with_points) break;
    pts.push_back(
        {{"label", p.label},
         {"commit", p.first_commit},
         {"value", p.value},
         {"runs", p.run_keys},
         {"started_unix_s", p.started_unix_s},
         {"attributed", p.attributed},
         {"dirty", p.dirty},
         {"clock_sm_median_mhz",
          p.clock_sm_median_mhz ? nlohmann::json(*p.clock_sm_median_mhz) : nlohmann::json()}});
  }
  for (const auto& st : s.steps)
    steps.push_back({{"index", st.index},
                     {"before", st.before},
                     {"after", st.after},
                     {"before_value", st.before_value},
                     {"after_value", st.after_value},
                     {"size_pct", st.size_pct},
                     {"p_value", st.p_value},
                     {"confidence", 1 - st.p_value}});
  // The points and steps are moved in, not copied (an initializer list copies: 100,000 points
  // would be built twice).
  nlohmann::json out = {
      {"schema", "vouch.trend"},
      {"schema_version", 1},
      {"metric", s.metric},
      {"unit", s.unit},
      {"better", s.better},
      {"arm", s.arm},
      {"by", TrendByName(s.by)},
      {"gpus", s.gpus},
      {"points", nullptr},
      {"mixed", s.mixed},
      {"steps_searched", s.steps_searched},
      {"min_points_for_step", s.min_points_for_step},
      {"too_short", TrendTooShort(s).empty() ? nlohmann::json() : nlohmann::json(TrendTooShort(s))},
      {"method", s.method.empty() ? kExactMethod : s.method},
      {"steps", nullptr}};
  out["points"] = std::move(pts);
  out["steps"] = std::move(steps);
  return out;
}

}  // namespace vouch
