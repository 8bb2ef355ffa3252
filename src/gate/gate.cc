#include "gate/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "util/json_io.h"

namespace vouch {
namespace {

using ojson = nlohmann::ordered_json;

double OffsetPct(double base, double now) { return std::abs(now - base) / base * 100.0; }

// Thresholds in the metric's natural sense: a higher-is-better metric fails below -X %,
// a lower-is-better one above +X %.
std::string ThresholdText(const BaselineMetric& m) {
  const char* op = m.better == Better::kHigher ? "<" : ">";
  const char* sign = m.better == Better::kHigher ? "-" : "+";
  std::string out;
  if (m.fail_pct) out += fmt::format("fail {} {}{:g}%", op, sign, *m.fail_pct);
  if (m.warn_pct) {
    if (!out.empty()) out += ", ";
    out += fmt::format("warn {} {}{:g}%", op, sign, *m.warn_pct);
  }
  return out.empty() ? "none" : out;
}

std::string FormatValue(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  if (std::abs(v) >= 100) return fmt::format("{:.2f}", v);
  return fmt::format("{:.4g}", v);
}

std::string FormatChange(const std::optional<double>& pct) {
  return pct ? fmt::format("{:+.2f}%", *pct) : "-";
}

std::string VerdictCell(const GateRow& r) {
  std::string v(GateVerdictName(r.verdict));
  if (r.verdict == GateVerdict::kFail || r.verdict == GateVerdict::kMissing ||
      r.verdict == GateVerdict::kError)
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return v;
}

struct Counts {
  int pass = 0, warn = 0, fail = 0, skipped = 0, missing = 0, error = 0;
};

Counts Count(const GateReport& r) {
  Counts c;
  for (const auto& row : r.rows) {
    switch (row.verdict) {
      case GateVerdict::kPass:
        ++c.pass;
        break;
      case GateVerdict::kWarn:
        ++c.warn;
        break;
      case GateVerdict::kFail:
        ++c.fail;
        break;
      case GateVerdict::kSkipped:
        ++c.skipped;
        break;
      case GateVerdict::kMissing:
        ++c.missing;
        break;
      case GateVerdict::kError:
        ++c.error;
        break;
    }
  }
  return c;
}

std::string OverallLine(const GateReport& r) {
  Counts c = Count(r);
  std::string line = fmt::format("gate: {} ({} pass, {} warn, {} fail", GateVerdictName(r.overall),
                                 c.pass, c.warn, c.fail);
  if (c.missing) line += fmt::format(", {} missing", c.missing);
  if (c.error) line += fmt::format(", {} error", c.error);
  if (c.skipped) line += fmt::format(", {} skipped", c.skipped);
  line += ")";
  if (!r.clock_attributed) line += "; not clock-attributed";
  return line;
}

std::vector<std::string> Cells(const GateRow& r) {
  return {r.metric,
          r.unit,
          FormatValue(r.baseline),
          r.now ? FormatValue(*r.now) : "-",
          FormatChange(r.change_pct),
          r.threshold,
          VerdictCell(r) + (r.note.empty() ? "" : " (" + r.note + ")")};
}

const std::vector<std::string> kHeader = {"metric", "unit",      "baseline", "now",
                                          "change", "threshold", "verdict"};

std::string MarkdownEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string_view GateVerdictName(GateVerdict v) {
  switch (v) {
    case GateVerdict::kPass:
      return "pass";
    case GateVerdict::kWarn:
      return "warn";
    case GateVerdict::kFail:
      return "fail";
    case GateVerdict::kSkipped:
      return "skipped";
    case GateVerdict::kMissing:
      return "missing";
    case GateVerdict::kError:
      return "error";
  }
  return "error";
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::vector<GateCaveat> ClockCaveats(const ClockState& base, const ClockState& now) {
  std::vector<GateCaveat> out;
  if (!base.valid)
    out.push_back({"clock_unattributed",
                   "the baseline's clock state is not valid: the comparison is unattributed "
                   "(re-pin the baseline under a valid clock window)"});
  if (!now.valid)
    out.push_back({"clock_unattributed",
                   "this run's clock state is not valid: the comparison is unattributed"});
  if (!base.valid || !now.valid) return out;
  const std::string why =
      "taken under different clock states: the comparison is not clock-attributed";
  if (base.boot_id != now.boot_id)
    out.push_back({"clock_differs", fmt::format("{} (other boot: baseline boot id {}, now {})", why,
                                                base.boot_id, now.boot_id)});
  if (base.gpu_uuid != now.gpu_uuid)
    out.push_back({"clock_differs", fmt::format("{} (other GPU: baseline {}, now {})", why,
                                                base.gpu_uuid, now.gpu_uuid)});
  if (base.driver != now.driver)
    out.push_back({"clock_differs", fmt::format("{} (other driver: baseline {}, now {})", why,
                                                base.driver, now.driver)});
  double med = OffsetPct(base.sm_median_mhz, now.sm_median_mhz);
  if (!(med <= kClockOffsetPct))
    out.push_back({"clock_differs",
                   fmt::format("{} (SM clock medians {:.0f} and {:.0f} MHz are {:.2f}% apart, "
                               "more than {:g}%)",
                               why, base.sm_median_mhz, now.sm_median_mhz, med, kClockOffsetPct)});
  double mean = OffsetPct(base.sm_mean_mhz, now.sm_mean_mhz);
  if (!(mean <= kClockOffsetPct))
    out.push_back({"clock_differs",
                   fmt::format("{} (SM clock means {:.1f} and {:.1f} MHz are {:.2f}% apart, "
                               "more than {:g}%)",
                               why, base.sm_mean_mhz, now.sm_mean_mhz, mean, kClockOffsetPct)});
  return out;
}

GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env) {
  GateReport report;
  for (const BaselineMetric& m : baseline.metrics) {
    GateRow row;
    row.metric = m.name;
    row.unit = m.unit;
    row.better = m.better;
    row.fail_pct = m.fail_pct;
    row.warn_pct = m.warn_pct;
    row.baseline = m.value;
    row.threshold = ThresholdText(m);
    auto it = current.find(m.name);
    if (it != current.end()) row.now = it->second.value;

    std::optional<std::string> skip;
    if (!m.skip_env.empty() && env) skip = env(m.skip_env);
    if (skip && *skip == "1") {
      row.verdict = GateVerdict::kSkipped;
      row.note = m.skip_env + "=1";
    } else if (it == current.end()) {
      row.verdict = GateVerdict::kMissing;
      row.note = "the run did not produce this metric";
    } else if (it->second.unit != m.unit) {
      row.verdict = GateVerdict::kError;
      row.note = fmt::format("unit mismatch: baseline '{}', run '{}'; not compared", m.unit,
                             it->second.unit);
    } else if (!std::isfinite(it->second.value)) {
      row.verdict = GateVerdict::kError;
      row.note = "the run's value is not a finite number";
    } else if (m.value == 0) {
      row.verdict = GateVerdict::kError;
      row.note = "the baseline value is 0: a percentage change is undefined; re-pin the baseline";
    } else {
      double now = it->second.value;
      double change = (now - m.value) / std::abs(m.value) * 100.0;
      double bad = m.better == Better::kHigher ? -change : change;
      row.change_pct = change;
      row.change_in_bad_direction_pct = bad;
      if (m.fail_pct && bad > *m.fail_pct + kThresholdSlackPct)
        row.verdict = GateVerdict::kFail;
      else if (m.warn_pct && bad > *m.warn_pct + kThresholdSlackPct)
        row.verdict = GateVerdict::kWarn;
      else
        row.verdict = GateVerdict::kPass;
    }
    // Show the plain change of a skipped metric too, when both sides have it.
    if (row.verdict == GateVerdict::kSkipped && row.now && m.value != 0 &&
        std::isfinite(*row.now) && it->second.unit == m.unit) {
      row.change_pct = (*row.now - m.value) / std::abs(m.value) * 100.0;
      row.change_in_bad_direction_pct =
          m.better == Better::kHigher ? -*row.change_pct : *row.change_pct;
    }
    report.rows.push_back(std::move(row));
  }
  for (const auto& [name, value] : current) {
    (void)value;
    if (baseline.Find(name) == nullptr) report.not_in_baseline.push_back(name);
  }
  report.caveats = ClockCaveats(baseline.clock, current_clock);
  report.clock_attributed = report.caveats.empty();

  Counts c = Count(report);
  if (c.fail || c.missing || c.error)
    report.overall = GateVerdict::kFail;
  else if (c.warn)
    report.overall = GateVerdict::kWarn;
  else
    report.overall = GateVerdict::kPass;
  return report;
}

std::string RenderGateText(const GateReport& report) {
  std::vector<std::vector<std::string>> table = {kHeader};
  for (const auto& r : report.rows) table.push_back(Cells(r));
  std::vector<size_t> width(kHeader.size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  // Numbers right-aligned, words left-aligned.
  const std::vector<bool> right = {false, false, true, true, true, false, false};
  std::string out;
  for (const auto& row : table) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) line += "  ";
      if (i + 1 == row.size())
        line += row[i];
      else if (right[i])
        line += fmt::format("{:>{}}", row[i], width[i]);
      else
        line += fmt::format("{:<{}}", row[i], width[i]);
    }
    out += line + "\n";
  }
  for (const auto& c : report.caveats) out += "caveat: " + c.message + "\n";
  if (!report.not_in_baseline.empty()) {
    out += "not gated (not in the baseline):";
    for (const auto& n : report.not_in_baseline) out += " " + n;
    out += "\n";
  }
  out += OverallLine(report) + "\n";
  return out;
}

std::string RenderGateMarkdown(const GateReport& report) {
  std::string out = "**vouch " + OverallLine(report) + "**\n\n";
  out += "| metric | unit | baseline | now | change | threshold | verdict |\n";
  out += "|---|---|---:|---:|---:|---|---|\n";
  for (const auto& r : report.rows) {
    auto cells = Cells(r);
    if (r.verdict == GateVerdict::kFail || r.verdict == GateVerdict::kMissing ||
        r.verdict == GateVerdict::kError)
      cells.back() = "**" + cells.back() + "**";
    out += "|";
    for (const auto& c : cells) out += " " + MarkdownEscape(c) + " |";
    out += "\n";
  }
  if (!report.caveats.empty()) {
    out += "\nCaveats:\n";
    for (const auto& c : report.caveats) out += "- " + MarkdownEscape(c.message) + "\n";
  }
  if (!report.not_in_baseline.empty()) {
    out += "\nNot gated (not in the baseline):";
    for (const auto& n : report.not_in_baseline) out += " `" + n + "`";
    out += "\n";
  }
  return out;
}

std::string RenderGateJson(const GateReport& report) {
  auto opt = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson j;
  j["schema"] = "vouch.gate";
  j["schema_version"] = 1;
  j["overall"] = GateVerdictName(report.overall);
  j["clock_attributed"] = report.clock_attributed;
  ojson caveats = ojson::array();
  for (const auto& c : report.caveats)
    caveats.push_back({{"code", c.code}, {"message", c.message}});
  j["caveats"] = std::move(caveats);
  ojson rows = ojson::array();
  for (const auto& r : report.rows) {
    ojson o;
    o["metric"] = r.metric;
    o["unit"] = r.unit;
    o["better"] = BetterName(r.better);
    o["baseline"] = r.baseline;
    o["now"] = opt(r.now);
    o["change_pct"] = opt(r.change_pct);
    o["change_in_bad_direction_pct"] = opt(r.change_in_bad_direction_pct);
    o["fail_pct"] = opt(r.fail_pct);
    o["warn_pct"] = opt(r.warn_pct);
    o["threshold"] = r.threshold;
    o["verdict"] = GateVerdictName(r.verdict);
    o["note"] = r.note;
    rows.push_back(std::move(o));
  }
  j["rows"] = std::move(rows);
  j["not_in_baseline"] = report.not_in_baseline;
  return DumpJson(j, 2) + "\n";
}

int GateExitCode(const GateReport& report) { return report.overall == GateVerdict::kFail ? 1 : 0; }

}  // namespace vouch
