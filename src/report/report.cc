#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/page.h"
#include "util/json_io.h"
#include "util/value_format.h"

namespace vouch {
namespace {

using namespace report_page;  // NOLINT: the page helpers

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

// The SM clock axis of a leg's chart: from the lowest sample to the highest sample or the
// GPU's max clock, whichever is higher, with a margin: a wander of a few MHz shows (an axis
// from 0 to 4,000 MHz hid it). {"mhz": [lo, hi]}, or {} with no clock sample.
json ClockRange(const json& series, const json& window) {
  double lo = 0, hi = 0;
  bool any = false;
  if (At(series, "sm_mhz").is_array())
    for (const auto& v : series["sm_mhz"])
      if (v.is_number()) {
        double x = v.get<double>();
        lo = any ? std::min(lo, x) : x;
        hi = any ? std::max(hi, x) : x;
        any = true;
      }
  if (!any) return json::object();
  if (At(window, "gpus").is_array())
    for (const auto& g : window["gpus"]) {
      const auto& gpu = At(series, "gpu");
      const auto& index = At(At(g, "fold"), "gpu");
      if (!gpu.is_null() && !index.is_null() && gpu != index) continue;
      double max_clock = Dbl(At(g, "static"), "max_sm_mhz");
      if (max_clock > 0) hi = std::max(hi, max_clock);
      break;
    }
  const double pad = std::max(10.0, 0.05 * (hi - lo));
  return {{"mhz", {std::max(0.0, lo - pad), hi + pad}}};
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
          marks, {{"verdict", verdict}, {"xlabel", "s"}, {"ranges", ClockRange(s, w)}});
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
            HtmlEscape(Str(s, "name")), FormatValue(Dbl(s, "median"), Str(s, "unit")),
            HtmlEscape(Str(s, "unit")), FormatValue(Dbl(s, "min"), Str(s, "unit")),
            FormatValue(Dbl(s, "max"), Str(s, "unit")),
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

// A gate row's interval of the change: "-1.20 % .. +0.40 % (95 %)", or why there is none.
std::string GateInterval(const json& r) {
  const auto& iv = At(r, "interval");
  if (iv.is_object() && At(iv, "lo_pct").is_number() && At(iv, "hi_pct").is_number()) {
    std::string level = At(iv, "alpha_one_sided").is_number()
                            ? fmt::format(" (one-sided {:.3g} % each end)",
                                          100 * iv["alpha_one_sided"].get<double>())
                            : "";
    return fmt::format("{:+.2f} % .. {:+.2f} %{}", iv["lo_pct"].get<double>(),
                       iv["hi_pct"].get<double>(), level);
  }
  const std::string note = Str(r, "noise_note");
  return note.empty() ? "n/a" : "n/a: " + HtmlEscape(note);
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
      "<th>interval</th><th>threshold</th><th>verdict</th></tr>\n";
  if (At(gate, "rows").is_array())
    for (const auto& r : gate["rows"]) {
      std::string verdict = Str(r, "verdict", "?");
      p.body += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td>{} "
          "{}</td><td>{}</td><td>{}</td><td class=\"interval\">{}</td><td>{}</td><td>{}{}</td></"
          "tr>\n",
          verdict == "fail" || verdict == "missing" || verdict == "error" ? "bad"
          : verdict == "warn"                                             ? "warn"
                                                                          : "",
          HtmlEscape(Str(r, "metric")), FormatValue(Dbl(r, "baseline"), Str(r, "unit")),
          HtmlEscape(Str(r, "unit")),
          At(r, "now").is_number() ? FormatValue(r["now"].get<double>(), Str(r, "unit")) : "-",
          At(r, "change_pct").is_number() ? fmt::format("{:+.2f} %", r["change_pct"].get<double>())
                                          : "-",
          GateInterval(r), HtmlEscape(Str(r, "threshold")), HtmlEscape(verdict),
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
}  // namespace vouch
