// What every page of the report is made of (report.cc: records; trend_trace.cc: trends and
// traces): the palette, JSON accessors that never throw, and the page with its chart
// descriptions.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/assets.h"
#include "report/report.h"
#include "util/result.h"

namespace vouch::report_page {

// The palette: one colour per meaning, the same in every chart.
inline constexpr const char* kClock = "#1f77b4";
inline constexpr const char* kPower = "#ff7f0e";
inline constexpr const char* kArmA = "#1f77b4";
inline constexpr const char* kArmB = "#d62728";
inline constexpr const char* kValid = "rgba(44,160,44,0.10)";
inline constexpr const char* kInvalid = "rgba(214,39,40,0.12)";
inline constexpr const char* kRegion = "rgba(44,160,44,0.18)";

using json = nlohmann::json;

inline std::string Num(double v, int digits = 6) { return fmt::format("{:.{}g}", v, digits); }

inline const json& At(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

inline std::string Str(const json& j, const char* key, const std::string& def = "") {
  const auto& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : def;
}

inline double Dbl(const json& j, const char* key, double def = 0) {
  const auto& v = At(j, key);
  return v.is_number() ? v.get<double>() : def;
}

// A JSON value safe inside <script>: "</" cannot close the element.
inline std::string ScriptJson(const json& j) {
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

inline Status NeedUplot(const ReportAssets& a) {
  if (a.have_uplot && !a.uplot_js.empty()) return OkStatus();
  return MakeError(
      "this vouch was built without the report's chart library (web/node_modules/uplot is "
      "missing): run scripts/setup.sh (it runs npm ci in web/), re-run cmake and rebuild");
}

}  // namespace vouch::report_page
