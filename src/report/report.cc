#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "util/json_io.h"

namespace vouch {
namespace {

// The palette: one colour per meaning, the same in every chart.
constexpr const char* kClock = "#1f77b4";
constexpr const char* kPower = "#ff7f0e";
constexpr const char* kArmA = "#1f77b4";
constexpr const char* kArmB = "#d62728";
constexpr const char* kValid = "rgba(44,160,44,0.10)";
constexpr const char* kInvalid = "rgba(214,39,40,0.12)";
constexpr const char* kRegion = "rgba(44,160,44,0.18)";

using json = nlohmann::json;

std::string Num(double v, int digits = 6) { return fmt::format("{:.{}g}", v, digits); }

const json& At(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string Str(const json& j, const char* key, const std::string& def = "") {
  const auto& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : def;
}

double Dbl(const json& j, const char* key, double def = 0) {
  const auto& v = At(j, key);
  return v.is_number() ? v.get<double>() : def;
}

// A JSON value safe inside <script>: "</" cannot close the element.
std::string ScriptJson(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '!'))
      out += "\\u003c";
    else
      out += s[i];
  }
  return out;
}

struct Page {
  std::string title, body;
  json charts = json::array();

  // A chart: X values, series {label, values, color, scale, points}, marks drawn on top.
  std::string Chart(const std::string& kind, const std::string& title_text, json x, json series,
                    json marks = json::object(), json extra = json::object()) {
    std::string id = fmt::format("chart{}", charts.size());
    json c = {{"id", id},
              {"kind", kind},
              {"title", title_text},
              {"x", std::move(x)},
              {"series", std::move(series)},
              {"marks", std::move(marks)}};
    for (auto& [k, v] : extra.items()) c[k] = v;
    charts.push_back(std::move(c));
    return fmt::format("<div class=\"chart chart-{}\" id=\"{}\"></div>\n", kind, id);
  }

  std::string Html(const ReportAssets& a) const {
    json data = {{"charts", charts}, {"generator", "vouch"}};
    return fmt::format(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>{}</title>\n<style>{}</style>\n<style>{}</style>\n</head>\n<body>\n{}"
        "<footer>vouch report; charts by uPlot {} (inlined: this file opens with no "
        "network)</footer>\n"
        "<script type=\"application/json\" id=\"vouch-data\">{}</script>\n<script>{}</script>\n"
        "<script>{}</script>\n</body>\n</html>\n",
        HtmlEscape(title), a.uplot_css, a.app_css, body, HtmlEscape(a.uplot_version),
        ScriptJson(data), a.uplot_js, a.app_js);
  }
};

Status NeedUplot(const ReportAssets& a) {
  if (a.have_uplot && !a.uplot_js.empty()) return OkStatus();
  return MakeError(
      "this vouch was built without the report's chart library (web/node_modules/uplot is "
      "missing): run scripts/setup.sh (it runs npm ci in web/), re-run cmake and rebuild");
}

std::string Header(const json& rec, const std::string& what) {
  const auto& env = At(rec, "environment");
  std::string h =
      fmt::format("<header><h1>{}</h1>\n<p class=\"meta\">{} {} started {}", HtmlEscape(what),
                  HtmlEscape(Str(rec, "kind", "run")), HtmlEscape(Str(rec, "status", "?")),
                  HtmlEscape(Str(rec, "started", "?")));
  const auto& revs = At(rec, "revisions");
  if (revs.is_array() && !revs.empty() && revs[0].is_object() && revs[0].value("git", false))
    h += fmt::format(
        " &middot; commit <code>{}</code>{}{}", HtmlEscape(Str(revs[0], "commit").substr(0, 12)),
        At(revs[0], "branch").is_string() ? " on " + HtmlEscape(Str(revs[0], "branch")) : "",
        At(revs[0], "dirty").is_boolean() && revs[0]["dirty"].get<bool>() ? " <b>(dirty)</b>" : "");
  const auto& gpus = At(env, "gpus");
  if (gpus.is_array() && !gpus.empty())
    h += fmt::format(" &middot; {} on {}", HtmlEscape(Str(gpus[0], "name", "?")),
                     HtmlEscape(Str(env, "hostname", "?")));
  h += "</p>\n";
  if (At(env, "simulated").is_boolean() && env["simulated"].get<bool>())
    h += fmt::format("<p class=\"sim\">SIMULATED DEVICE: {}</p>\n", HtmlEscape(Str(env, "device")));
  h += fmt::format("<p class=\"reproduce\">reproduce: <code>{}</code></p>\n</header>\n",
                   HtmlEscape(Str(At(rec, "recipe"), "reproduce")));
  return h;
}

std::string LegState(const json& l) {
  if (Str(l, "role") == "warmup") return "discarded (warmup)";
  return At(l, "valid").is_boolean() && l["valid"].get<bool>() ? "valid" : "INVALID";
}

// A leg as people count it: record.json's "index" is the 0-based position in legs[], every
// output numbers legs from 1 (progress lines, directories, reasons).
std::string LegNumber(const json& l) {
  const auto& i = At(l, "index");
  return i.is_number_integer() ? std::to_string(i.get<long long>() + 1) : "?";
}

// The legs table and, per leg, the SM clock and power over time with the verdict and the
// measured region.
void LegSections(const json& rec, Page& p) {
  const auto& legs = At(rec, "legs");
  if (!legs.is_array() || legs.empty()) {
    p.body += "<p>No leg ran.</p>\n";
    return;
  }
  p.body +=
      "<section><h2>Legs</h2>\n<table class=\"legs\"><tr><th>leg</th><th>arm</th><th>role</th>"
      "<th>state</th><th>wall s</th><th>SM median MHz</th><th>reasons</th></tr>\n";
  for (const auto& l : legs) {
    std::string clock = "-";
    const auto& gpus = At(At(l, "window"), "gpus");
    if (gpus.is_array() && !gpus.empty()) {
      const auto& sm = At(At(gpus[0], "fold"), "sm_mhz");
      if (sm.is_object()) clock = Num(Dbl(sm, "median"), 5);
    }
    std::string reasons;
    if (At(l, "reasons").is_array())
      for (const auto& r : l["reasons"])
        if (r.is_string()) reasons += HtmlEscape(r.get<std::string>()) + "<br>";
    std::string state = LegState(l);
    p.body += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        state == "INVALID" ? "bad" : "", LegNumber(l), HtmlEscape(Str(l, "arm")),
        HtmlEscape(Str(l, "role")), state, Dbl(At(l, "result"), "wall_ns") / 1e9, clock, reasons);
  }
  p.body += "</table></section>\n<section><h2>SM clock and power per leg</h2>\n";
  p.body +=
      "<p class=\"legend\">blue: SM clock (MHz, left); orange: power (W, right); green band: the "
      "measured region the window was judged over; title: the window's verdict.</p>\n"
      "<div class=\"grid\">\n";
  int drawn = 0;
  for (const auto& l : legs) {
    const auto& series = At(l, "series");
    const auto& w = At(l, "window");
    if (!series.is_array()) continue;
    for (const auto& s : series) {
      if (!At(s, "t_s").is_array() || s["t_s"].empty()) continue;
      std::string verdict = Str(At(w, "verdict"), "status", "?");
      double t0 = Dbl(s, "t0_unix_s");
      json marks = {{"regions", json::array()}};
      const auto& region = At(w, "region");
      if (region.is_object())
        marks["regions"].push_back(
            {Dbl(region, "begin_unix_s") - t0, Dbl(region, "end_unix_s") - t0, kRegion});
      else
        marks["regions"].push_back(
            {s["t_s"].front(), s["t_s"].back(), verdict == "valid" ? kValid : kInvalid});
      std::string title = fmt::format(
          "leg {} {} {}{}: window {}", LegNumber(l), Str(l, "arm"), Str(l, "role"),
          series.size() > 1 ? fmt::format(" GPU {}", HtmlEscape(DumpJson(At(s, "gpu")))) : "",
          verdict);
      p.body += p.Chart(
          "leg", title, s["t_s"],
          json::array(
              {{{"label", "SM MHz"}, {"values", s["sm_mhz"]}, {"color", kClock}, {"scale", "mhz"}},
               {{"label", "power W"},
                {"values", s["power_w"]},
                {"color", kPower},
                {"scale", "w"}}}),
          marks, {{"verdict", verdict}, {"xlabel", "s"}});
      ++drawn;
    }
  }
  p.body += "</div>\n";
  if (drawn == 0)
    p.body +=
        "<p>No leg has its samples here (report from the run directory, or a store that was "
        "given it).</p>\n";
  p.body += "</section>\n";
}

std::string Headline(const json& rec) {
  const auto& v = At(At(rec, "extra"), "verdict");
  if (v.is_object() && At(v, "headline").is_string()) return v["headline"].get<std::string>();
  // The first metric with a direction that is not built in.
  for (const auto& [arm, sums] : At(rec, "summary").items())
    for (const auto& s : sums)
      if (Str(s, "name").rfind("vouch.", 0) != 0 && Str(s, "better", "none") != "none")
        return Str(s, "name");
  return "vouch.wall_s";
}

// The headline metric of every measured leg, one series per arm.
void ArmsChart(const json& rec, Page& p) {
  std::string headline = Headline(rec);
  std::vector<std::string> arms;
  const auto& legs = At(rec, "legs");
  if (!legs.is_array()) return;
  json x = json::array();
  std::map<std::string, json> values;
  for (const auto& l : legs) {
    std::string arm = Str(l, "arm");
    if (std::find(arms.begin(), arms.end(), arm) == arms.end()) arms.push_back(arm);
  }
  for (const auto& a : arms) values[a] = json::array();
  int n = 0;
  for (const auto& l : legs) {
    if (Str(l, "role") != "measured") continue;
    json v;
    if (At(l, "metrics").is_array())
      for (const auto& m : l["metrics"])
        if (Str(m, "name") == headline && At(m, "value").is_number()) v = m["value"];
    x.push_back(At(l, "index").is_number_integer() ? json(l["index"].get<long long>() + 1)
                                                   : json(n + 1));
    for (const auto& a : arms) values[a].push_back(Str(l, "arm") == a ? v : json());
    ++n;
  }
  if (n == 0) return;
  json series = json::array();
  for (size_t i = 0; i < arms.size(); ++i)
    series.push_back({{"label", arms[i]},
                      {"values", values[arms[i]]},
                      {"color", i == 0 ? kArmA : kArmB},
                      {"points", true}});
  p.body += fmt::format("<section><h2>Legs per arm: {}</h2>\n", HtmlEscape(headline));
  p.body += p.Chart("arms", fmt::format("{} per measured leg", headline), x, series, json::object(),
                    {{"xlabel", "leg"}, {"xint", true}, {"ylabel", headline}});
  p.body += "</section>\n";
}

void SummaryTable(const json& rec, Page& p) {
  p.body += "<section><h2>Summary over valid legs</h2>\n";
  for (const auto& [arm, sums] : At(rec, "summary").items()) {
    p.body += fmt::format(
        "<h3>{}</h3>\n<table><tr><th>metric</th><th>median</th><th>unit</th><th>min</th>"
        "<th>max</th><th>spread</th><th>n</th></tr>\n",
        HtmlEscape(arm));
    if (!sums.is_array() || sums.empty())
      p.body += "<tr><td colspan=\"7\">no valid leg: no number can be quoted</td></tr>\n";
    else
      for (const auto& s : sums)
        p.body += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></"
            "tr>\n",
            HtmlEscape(Str(s, "name")), Num(Dbl(s, "median")), HtmlEscape(Str(s, "unit")),
            Num(Dbl(s, "min")), Num(Dbl(s, "max")),
            At(s, "spread_pct").is_number() ? fmt::format("{:.2f} %", s["spread_pct"].get<double>())
                                            : "n/a",
            HtmlEscape(DumpJson(At(s, "n"))));
    p.body += "</table>\n";
  }
  p.body += "</section>\n";
}

void AbSection(const json& rec, Page& p) {
  const auto& v = At(At(rec, "extra"), "verdict");
  const auto& d = At(v, "decision");
  const auto& ratio = At(d, "ratio");
  p.body += fmt::format(
      "<section class=\"verdict\"><h2>A/B verdict: <span id=\"verdict\">{}</span></h2>\n",
      HtmlEscape(Str(v, "verdict", "?")));
  p.body += fmt::format("<p>headline <code>{}</code> ({} is better); {} pairs used, {} refused",
                        HtmlEscape(Str(v, "headline", "?")), HtmlEscape(Str(v, "better", "?")),
                        HtmlEscape(DumpJson(At(v, "pairs_used"))),
                        HtmlEscape(DumpJson(At(v, "pairs_refused"))));
  if (ratio.is_object())
    p.body += fmt::format("; ratio B/A {:.4f} ({:.0f} % CI {:.4f} .. {:.4f})", Dbl(ratio, "mean"),
                          100 * Dbl(ratio, "confidence", 0.95), Dbl(ratio, "lo"), Dbl(ratio, "hi"));
  p.body += fmt::format("; band &plusmn; {:.3f} % ({})</p>\n", Dbl(d, "band_pct"),
                        HtmlEscape(Str(d, "band_source", "?")));
  if (At(d, "reasons").is_array())
    for (const auto& r : d["reasons"])
      if (r.is_string())
        p.body += fmt::format("<p class=\"reason\">{}</p>\n", HtmlEscape(r.get<std::string>()));
  // The pairs' log ratios (in percent) with the interval and the band.
  const auto& pairs = At(v, "pairs");
  if (pairs.is_array() && !pairs.empty()) {
    json x = json::array(), dv = json::array();
    for (size_t i = 0; i < pairs.size(); ++i) {
      x.push_back(i + 1);
      const auto& dd = At(pairs[i], "d");
      dv.push_back(dd.is_number() ? json(100 * dd.get<double>()) : json());
    }
    double band = Dbl(d, "band_pct");
    json marks = {{"hlines", json::array({{{"y", band}, {"label", "band"}, {"dash", true}},
                                          {{"y", -band}, {"label", "-band"}, {"dash", true}},
                                          {{"y", 0}, {"label", ""}, {"dash", false}}})},
                  {"hbands", json::array()}};
    if (ratio.is_object()) {
      double lo = 100 * std::log(Dbl(ratio, "lo", 1)), hi = 100 * std::log(Dbl(ratio, "hi", 1));
      double mean = 100 * std::log(Dbl(ratio, "mean", 1));
      if (Str(v, "better") == "lower") {  // d is oriented: positive means B is better
        std::swap(lo, hi);
        lo = -lo;
        hi = -hi;
        mean = -mean;
      }
      marks["hbands"].push_back({lo, hi, "rgba(31,119,180,0.15)"});
      marks["hlines"].push_back({{"y", mean}, {"label", "mean"}, {"dash", false}});
    }
    p.body += p.Chart(
        "pairs", "per-pair log ratio d = ln(B/A), % (positive: B better)", x,
        json::array({{{"label", "d %"}, {"values", dv}, {"color", kArmB}, {"points", true}}}),
        marks, {{"xlabel", "pair"}, {"ypad", band}, {"xint", true}, {"ylabel", "d %"}});
    p.body +=
        "<p class=\"legend\">points: each pair's d; shaded: the confidence interval of the mean; "
        "dashed: the noise band.</p>\n";
  }
  p.body += "</section>\n";
}

void GateTable(const json& gate, const std::string& baseline_path, Page& p) {
  p.body += fmt::format(
      "<section class=\"verdict\"><h2>Gate: <span id=\"verdict\">{}</span></h2>\n<p>against "
      "<code>{}</code>{}</p>\n",
      HtmlEscape(Str(gate, "overall", "?")), HtmlEscape(baseline_path),
      At(gate, "clock_attributed").is_boolean() && !gate["clock_attributed"].get<bool>()
          ? " &middot; <b>not clock-attributed</b>"
          : "");
  if (At(gate, "caveats").is_array())
    for (const auto& c : gate["caveats"])
      p.body += fmt::format("<p class=\"reason\">{}</p>\n", HtmlEscape(Str(c, "message")));
  p.body +=
      "<table class=\"gate\"><tr><th>metric</th><th>baseline</th><th>now</th><th>change</th>"
      "<th>threshold</th><th>verdict</th></tr>\n";
  if (At(gate, "rows").is_array())
    for (const auto& r : gate["rows"]) {
      std::string verdict = Str(r, "verdict", "?");
      p.body += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td>{} "
          "{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td></"
          "tr>\n",
          verdict == "fail" || verdict == "missing" || verdict == "error" ? "bad"
          : verdict == "warn"                                             ? "warn"
                                                                          : "",
          HtmlEscape(Str(r, "metric")), Num(Dbl(r, "baseline")), HtmlEscape(Str(r, "unit")),
          At(r, "now").is_number() ? Num(r["now"].get<double>()) : "-",
          At(r, "change_pct").is_number() ? fmt::format("{:+.2f} %", r["change_pct"].get<double>())
                                          : "-",
          HtmlEscape(Str(r, "threshold")), HtmlEscape(verdict),
          Str(r, "note").empty() ? "" : " (" + HtmlEscape(Str(r, "note")) + ")");
    }
  p.body += "</table></section>\n";
}

}  // namespace

Result<std::string> RenderRecordReport(const json& rec, const ReportAssets& a) {
  if (auto s = NeedUplot(a); !s) return s.error();
  if (!rec.is_object()) return MakeError("the record is not a JSON object");
  Page p;
  std::string kind = Str(rec, "kind", "run");
  const auto& extra = At(rec, "extra");
  bool ab = At(extra, "verdict").is_object();
  json gate = At(extra, "gate");
  std::string baseline_path = Str(extra, "baseline_path");
  const auto& stored = At(At(rec, "stored"), "gates");
  if (!gate.is_object() && stored.is_array() && !stored.empty()) {
    gate = At(stored.back(), "gate");
    baseline_path = Str(stored.back(), "baseline_path");
  }
  std::string what = ab                 ? "vouch A/B report"
                     : gate.is_object() ? "vouch gate report"
                                        : fmt::format("vouch {} report", kind);
  p.title = fmt::format("{}: {}", what, Str(rec, "started"));
  p.body += Header(rec, what);
  if (ab) {
    AbSection(rec, p);
  } else if (gate.is_object()) {
    GateTable(gate, baseline_path, p);
  } else {
    p.body += fmt::format(
        "<section class=\"verdict\"><h2>Run: <span id=\"verdict\">{} of {} measured legs "
        "valid</span></h2></section>\n",
        HtmlEscape(DumpJson(At(rec, "valid_legs"))),
        HtmlEscape(DumpJson(At(rec, "measured_legs"))));
  }
  ArmsChart(rec, p);
  SummaryTable(rec, p);
  LegSections(rec, p);
  if (At(rec, "caveats").is_array() && !rec["caveats"].empty()) {
    p.body += "<section><h2>Caveats</h2><ul>\n";
    for (const auto& c : rec["caveats"])
      if (c.is_string()) p.body += fmt::format("<li>{}</li>\n", HtmlEscape(c.get<std::string>()));
    p.body += "</ul></section>\n";
  }
  return p.Html(a);
}

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
          HtmlEscape(st.before), HtmlEscape(st.after), Num(st.before_value), Num(st.after_value),
          st.size_pct, st.p_value);
    p.body += "</table>\n";
  }
  p.body +=
      "<p class=\"legend\">E-Divisive means (Matteson &amp; James 2014) with a permutation "
      "test; red lines: the steps; hollow points: unattributed.</p>\n</section>\n";
  json x = json::array(), v = json::array(), u = json::array(), labels = json::array();
  for (size_t i = 0; i < s.points.size(); ++i) {
    x.push_back(i);
    labels.push_back(s.points[i].label);
    v.push_back(s.points[i].attributed ? json(s.points[i].value) : json());
    u.push_back(s.points[i].attributed ? json() : json(s.points[i].value));
  }
  json vlines = json::array();
  for (const auto& st : s.steps)
    vlines.push_back({{"x", st.index - 0.5}, {"label", fmt::format("{:+.1f} %", st.size_pct)}});
  json series = json::array({{{"label", s.metric + (s.unit.empty() ? "" : " (" + s.unit + ")")},
                              {"values", v},
                              {"color", kClock},
                              {"points", true},
                              {"line", true}}});
  if (s.unattributed > 0)
    series.push_back(
        {{"label", "unattributed"}, {"values", u}, {"color", "#999"}, {"points", true}});
  p.body += "<section>\n" +
            p.Chart("trend", fmt::format("{} per {}", s.metric, TrendByName(s.by)), x, series,
                    {{"vlines", vlines}},
                    {{"xlabels", labels}, {"xlabel", std::string(TrendByName(s.by))}}) +
            "</section>\n";
  p.body += fmt::format(
      "<section><h2>Points</h2><table><tr><th>{}</th><th>value</th><th>runs</th><th>SM "
      "clock</th></tr>\n",
      TrendByName(s.by));
  for (const auto& pt : s.points)
    p.body += fmt::format(
        "<tr class=\"{}\"><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        pt.attributed ? "" : "warn", HtmlEscape(pt.label), pt.dirty ? " (dirty)" : "",
        Num(pt.value), pt.run_keys.size(),
        pt.clock_sm_median_mhz ? fmt::format("{:.0f} MHz", *pt.clock_sm_median_mhz) : "n/a");
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
