#include "gate/gate.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "gate/advice.h"
#include "gate/gate_count.h"
#include "gate/threshold.h"
#include "metrics/ratio.h"
#include "util/escape.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch {
namespace {

using ojson = nlohmann::ordered_json;

double OffsetPct(double base, double now) { return std::abs(now - base) / base * 100.0; }

// "n_batch: baseline 256, now 512; model_type: ..." for every property that differs; "" when
// equal or when either side reports no configuration (a source without one).
std::string ConfigDifference(const std::map<std::string, std::string>& base,
                             const std::map<std::string, std::string>& now) {
  if (base.empty() || now.empty()) return "";
  std::vector<std::string> diffs;
  std::set<std::string> keys;
  for (const auto& [k, v] : base) keys.insert(k);
  for (const auto& [k, v] : now) keys.insert(k);
  for (const auto& k : keys) {
    auto b = base.find(k), n = now.find(k);
    std::string bv = b == base.end() ? "(absent)" : b->second;
    std::string nv = n == now.end() ? "(absent)" : n->second;
    if (bv != nv) diffs.push_back(fmt::format("{}: baseline {}, now {}", k, bv, nv));
  }
  return fmt::format("{}", fmt::join(diffs, "; "));
}

// The verdict of a compared row. With an interval: fail only when all of it is beyond the
// fail threshold, inconclusive when it straddles it; warn when all of it is beyond the warn
// threshold. Without one: the point change BAD (bad direction, percent) alone.
void Decide(const BaselineMetric& m, double bad, const std::vector<double>& now_values,
            GateRow* row) {
  // BAD is the change's percent in the bad direction; its log factor, as BadLog gives it.
  const double bad_pct = m.better == Better::kHigher ? -bad : bad;
  double lo = BadLog(bad_pct, m.better), hi = lo;
  if (row->interval) {
    double a = BadLog(row->interval->lo_pct, m.better), b = BadLog(row->interval->hi_pct, m.better);
    lo = std::min(a, b);
    hi = std::max(a, b);
  }
  auto beyond = [&](double t) { return lo > ThresholdLog(t); };
  auto within = [&](double t) { return hi <= ThresholdLog(t); };
  if (m.fail_pct && beyond(*m.fail_pct)) {
    row->verdict = GateVerdict::kFail;
  } else if (m.fail_pct && !within(*m.fail_pct)) {
    row->verdict = GateVerdict::kInconclusive;
    // The baseline trials' spread, as `vouch baseline` advised from (gate/advice.h).
    std::optional<double> sd = SdOfLogs(m.trials);
    if (!sd) sd = SdOfLogs(now_values);
    row->note = fmt::format(
        "the noise cannot tell: the change is {:+.2f}% .. {:+.2f}%, across the fail threshold of "
        "{:g}%{}",
        row->interval->lo_pct, row->interval->hi_pct, *m.fail_pct,
        sd ? InconclusiveAdvice(*sd, static_cast<int>(m.trials.size()),
                                static_cast<int>(now_values.size()), bad, *m.fail_pct,
                                row->interval->alpha)
           : std::string());
  } else if (m.warn_pct && beyond(*m.warn_pct)) {
    row->verdict = GateVerdict::kWarn;
  } else {
    row->verdict = GateVerdict::kPass;
    if (m.warn_pct && !within(*m.warn_pct)) row->note = "within the noise of the warn threshold";
  }
  std::optional<double> t = m.fail_pct ? m.fail_pct : m.warn_pct;
  if (row->interval && t &&
      (row->verdict == GateVerdict::kPass || row->verdict == GateVerdict::kInconclusive))
    row->mde_pct = *t + (row->interval->hi_pct - row->interval->lo_pct) / 2;
}

std::string FormatValue(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  if (std::abs(v) >= 100) return fmt::format("{:.2f}", v);
  return fmt::format("{:.4g}", v);
}

// A value in its unit: byte counts scaled to KiB/MiB/GiB/TiB with four significant digits
// (4.098 GiB, not 4400000000), anything else as FormatValue.
std::string FormatValue(double v, const std::string& unit) {
  if (unit != "bytes" || !std::isfinite(v) || std::abs(v) < 1024) return FormatValue(v);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double x = v / 1024;
  std::size_t u = 0;
  while (std::abs(x) >= 1024 && u + 1 < std::size(units)) {
    x /= 1024;
    ++u;
  }
  return fmt::format("{:.4g} {}", x, units[u]);
}

std::string FormatChange(const std::optional<double>& pct) {
  return pct ? fmt::format("{:+.2f}%", *pct) : "-";
}

std::string VerdictCell(const GateRow& r) {
  std::string v(GateVerdictName(r.verdict));
  if (r.verdict == GateVerdict::kFail || r.verdict == GateVerdict::kMissing ||
      r.verdict == GateVerdict::kError || r.verdict == GateVerdict::kInconclusive)
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return v;
}

struct Counts {
  int pass = 0, warn = 0, fail = 0, skipped = 0, missing = 0, error = 0, inconclusive = 0;
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
      case GateVerdict::kInconclusive:
        ++c.inconclusive;
        break;
    }
  }
  return c;
}

}  // namespace

namespace gate_internal {

std::string OverallLine(const GateReport& r) {
  Counts c = Count(r);
  std::string line = fmt::format("gate: {} ({} pass, {} warn, {} fail", GateVerdictName(r.overall),
                                 c.pass, c.warn, c.fail);
  if (c.missing) line += fmt::format(", {} missing", c.missing);
  if (c.error) line += fmt::format(", {} error", c.error);
  if (c.inconclusive) line += fmt::format(", {} inconclusive", c.inconclusive);
  if (c.skipped) line += fmt::format(", {} skipped", c.skipped);
  line += ")";
  if (!r.clock_attributed) line += "; not clock-attributed";
  if (r.simulated) line += "; SIMULATED device, not a measurement";
  return line;
}

// A warn never fails: say how to make it fail, so that a 100x regression on a secondary
// metric is not read as a pass.
std::string WarnHint(const GateReport& r) {
  for (const auto& row : r.rows)
    if (row.verdict == GateVerdict::kWarn && !row.fail_pct)
      return "a warn never fails the gate; to fail every metric past a threshold give "
             "--fail-pct PCT, or one metric --threshold NAME=fail:PCT";
  return "";
}

std::string RatioCell(const GateRow& r) {
  if (!r.ratio) return "-";
  std::string_view word = RatioWord(*r.ratio, r.better, r.unit);
  return fmt::format("{:.4f}{}", *r.ratio, word.empty() ? "" : fmt::format(" ({})", word));
}

std::string IntervalCell(const GateRow& r) {
  if (!r.interval) return "-";
  // Every value equal on both sides: no noise to see through, the change is the interval.
  if (r.interval->method == "exact") return "exact";
  return fmt::format("{:+.2f}% .. {:+.2f}%", r.interval->lo_pct, r.interval->hi_pct);
}

// The rows whose noise was not judged, grouped by why ("" when none). A baseline without
// trials says it once, as a caveat.
std::string NotJudgedLine(const GateReport& r) {
  std::map<std::string, std::vector<std::string>> by_note;
  for (const auto& row : r.rows)
    if (!row.noise_note.empty() && row.trials > 0) by_note[row.noise_note].push_back(row.metric);
  std::string out;
  for (const auto& [note, names] : by_note)
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", fmt::join(names, ", "), note);
  return out;
}

// How the intervals were made and what they guarantee, once per report.
std::string NoiseLine(const GateReport& r) {
  for (const auto& row : r.rows) {
    if (!row.interval) continue;
    std::string level =
        r.sequential
            ? fmt::format(
                  "one-sided {:.3g} % per metric at this look ({} of {}, {} legs of at most {}; "
                  "repeated confidence intervals on an O'Brien-Fleming-type alpha-spending "
                  "boundary, "
                  "{:.3g} % per metric over all looks)",
                  100 * r.alpha_per_metric, r.sequential->look, r.sequential->looks,
                  r.sequential->legs, r.sequential->max_legs, 100 * r.sequential->overall_alpha)
            : fmt::format("one-sided {:.3g} % per metric", 100 * r.alpha_per_metric);
    return fmt::format(
        "each interval is Welch's t on log values (the baseline's trials against this run's "
        "legs), {}; a metric fails only when all of it is beyond the fail threshold, so at most "
        "{:g} % of gates of code no worse than its thresholds fail; across the threshold it is "
        "inconclusive (exit {})",
        level, 100 * kGateFalseFailRate, kGateExitInconclusive);
  }
  return "";
}

std::vector<std::string> MdeLines(const GateReport& r) {
  std::vector<std::string> out;
  for (const auto& row : r.rows) {
    if (!row.mde_pct || !row.interval) continue;
    const bool fail = row.fail_pct.has_value();
    out.push_back(fmt::format(
        "{}: this gate could not have {} a change smaller than {:.2f} % in the bad direction "
        "(the {} threshold {:g} % plus the interval's half width {:.2f} %)",
        row.metric, fail ? "failed" : "warned on", *row.mde_pct, fail ? "fail" : "warn",
        fail ? *row.fail_pct : row.warn_pct.value_or(0),
        (row.interval->hi_pct - row.interval->lo_pct) / 2));
  }
  return out;
}

std::vector<std::string> Cells(const GateRow& r) {
  return {r.metric,
          r.unit,
          FormatValue(r.baseline, r.unit),
          r.now ? FormatValue(*r.now, r.unit) : "-",
          r.change_count && !r.change_pct ? CountChangeText(*r.change_count)
                                          : FormatChange(r.change_pct),
          IntervalCell(r),
          RatioCell(r),
          r.threshold,
          VerdictCell(r) + (r.note.empty() ? "" : " (" + r.note + ")")};
}

const std::vector<std::string> kHeader = {"metric",       "unit",      "baseline",
                                          "now",          "change",    "interval",
                                          "now/baseline", "threshold", "verdict"};

std::string MarkdownEscape(const std::string& s) { return MarkdownCell(s); }

}  // namespace gate_internal

using namespace gate_internal;

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
    case GateVerdict::kInconclusive:
      return "inconclusive";
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
  // One caveat per cause, each said once: a reader sees why, not the same words twice.
  std::vector<GateCaveat> out;
  if (base.simulated || now.simulated)
    out.push_back({"simulated", fmt::format("SIMULATED: {} on a simulated device; the clocks "
                                            "are a replay, not a measurement",
                                            base.simulated && now.simulated ? "the baseline and "
                                                                              "this run were taken"
                                            : base.simulated ? "the baseline was taken"
                                                             : "this run was taken")});
  if (!base.valid || !now.valid) {
    out.push_back(
        {"clock_unattributed",
         fmt::format("{}: the comparison is unattributed{}",
                     !base.valid && !now.valid
                         ? "neither the baseline's nor this run's clock state is valid"
                     : !base.valid ? "the baseline's clock state is not valid"
                                   : "this run's clock state is not valid",
                     !base.valid ? " (re-pin the baseline under a valid clock window)" : "")});
    return out;
  }
  std::vector<std::string> why;
  if (base.boot_id != now.boot_id)
    why.push_back(
        fmt::format("other boot: baseline boot id {}, now {}", base.boot_id, now.boot_id));
  if (base.gpu_uuid != now.gpu_uuid)
    why.push_back(fmt::format("other GPU: baseline {}, now {}", base.gpu_uuid, now.gpu_uuid));
  if (base.driver != now.driver)
    why.push_back(fmt::format("other driver: baseline {}, now {}", base.driver, now.driver));
  double med = OffsetPct(base.sm_median_mhz, now.sm_median_mhz);
  if (!(med <= kClockOffsetPct))
    why.push_back(fmt::format("SM clock medians {:.0f} and {:.0f} MHz are {:.2f}% apart",
                              base.sm_median_mhz, now.sm_median_mhz, med));
  double mean = OffsetPct(base.sm_mean_mhz, now.sm_mean_mhz);
  if (!(mean <= kClockOffsetPct))
    why.push_back(fmt::format("SM clock means {:.1f} and {:.1f} MHz are {:.2f}% apart",
                              base.sm_mean_mhz, now.sm_mean_mhz, mean));
  if (!why.empty()) {
    std::string limit =
        !(med <= kClockOffsetPct) || !(mean <= kClockOffsetPct)
            ? fmt::format("; more than {:g}% apart is another clock state", kClockOffsetPct)
            : std::string();
    out.push_back(
        {"clock_differs", fmt::format("taken under different clock states: the comparison is not "
                                      "clock-attributed ({}{})",
                                      fmt::join(why, "; "), limit)});
  }
  return out;
}

double GateAlphaPerMetric(const Baseline& baseline, const EnvLookup& env) {
  int can_fail = 0;
  for (const auto& m : baseline.metrics) {
    std::optional<std::string> skip;
    if (!m.skip_env.empty() && env) skip = env(m.skip_env);
    if (m.fail_pct && !(skip && *skip == "1")) ++can_fail;
  }
  return kGateFalseFailRate / std::max(1, can_fail);
}

bool GateUndecided(const GateReport& report) {
  return std::any_of(report.rows.begin(), report.rows.end(),
                     [](const GateRow& r) { return r.verdict == GateVerdict::kInconclusive; });
}

GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env) {
  return CompareToBaseline(baseline, current, current_clock, env, std::nullopt);
}

GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env,
                             const std::optional<GateLook>& look) {
  return CompareToBaseline(baseline, current, current_clock, env, look, GateOptions{});
}

GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env,
                             const std::optional<GateLook>& look, const GateOptions& options) {
  GateReport report;
  report.alpha_per_metric = look ? look->nominal_alpha : GateAlphaPerMetric(baseline, env);
  report.sequential = look;
  report.headline = baseline.headline;
  report.headline_reason = baseline.headline_reason.empty()
                               ? "named in the baseline file (it does not say why)"
                               : baseline.headline_reason;
  for (const BaselineMetric& m : baseline.metrics) {
    GateRow row;
    row.metric = m.name;
    row.unit = m.unit;
    row.better = m.better;
    row.fail_pct = m.fail_pct;
    row.warn_pct = m.warn_pct;
    row.baseline = m.value;
    row.threshold = ThresholdText(m, options.fail_count);
    auto it = current.find(m.name);
    if (it != current.end()) row.now = it->second.value;

    std::optional<std::string> skip;
    if (!m.skip_env.empty() && env) skip = env(m.skip_env);
    std::string config_diff =
        it == current.end() ? std::string() : ConfigDifference(m.config, it->second.config);
    if (skip && *skip == "1") {
      row.verdict = GateVerdict::kSkipped;
      row.note = m.skip_env + "=1";
    } else if (it == current.end()) {
      row.verdict = GateVerdict::kMissing;
      row.note = "the run did not produce this metric";
    } else if (!config_diff.empty()) {
      row.verdict = GateVerdict::kError;
      row.note = "other configuration: " + config_diff + "; not compared";
    } else if (it->second.unit != m.unit) {
      row.verdict = GateVerdict::kError;
      row.note = fmt::format("unit mismatch: baseline '{}', run '{}'; not compared", m.unit,
                             it->second.unit);
    } else if (!std::isfinite(it->second.value)) {
      row.verdict = GateVerdict::kError;
      row.note = "the run's value is not a finite number";
    } else if (m.value == 0 && IsCountMetric(m.name, m.unit)) {
      DecideZeroBaselineCount(m, it->second.value, options.fail_count, &row);
    } else if (m.value == 0 && !m.fail_pct) {
      // hyperfine's "system": 0.0 of a short command: a warn-only figure that cannot fail the
      // gate is not compared, rather than failing the gate as an error.
      row.verdict = GateVerdict::kSkipped;
      row.note =
          "the baseline value is 0: a percentage change is undefined (warn-only: not compared)";
    } else if (m.value == 0) {
      row.verdict = GateVerdict::kError;
      row.note = "the baseline value is 0: a percentage change is undefined; re-pin the baseline";
    } else {
      double now = it->second.value;
      double change = (now - m.value) / std::abs(m.value) * 100.0;
      double bad = BadPct(change, m.better);
      row.change_pct = change;
      row.change_in_bad_direction_pct = bad;
      row.ratio = now / m.value;
      std::vector<double> now_values = it->second.values;
      if (now_values.empty()) now_values.push_back(now);
      row.trials = m.trials.size();
      row.legs = now_values.size();
      std::string why;
      if (m.trials.empty())
        why = "the baseline keeps no trials";
      else
        row.interval =
            ChangeIntervalOf(m.trials, now_values, report.alpha_per_metric, &why,
                             static_cast<std::size_t>(std::max(0, baseline.first_stage_trials)));
      const bool one_a_side = !row.interval && m.trials.size() == 1 && now_values.size() == 1;
      if (one_a_side && m.samples.size() >= 2 && it->second.samples.size() >= 2) {
        // One value a side, but the tool timed every run inside it: the noise is there to use.
        std::string why2;
        row.interval =
            ChangeIntervalOf(m.samples, it->second.samples, report.alpha_per_metric, &why2, 0);
        if (row.interval)
          row.noise_note = fmt::format(
              "one trial and one leg: the noise is the tool's own per-run values ({} and {}), "
              "within one process each",
              m.samples.size(), it->second.samples.size());
      }
      if (!row.interval && one_a_side && m.fail_pct) {
        // No FAIL and no pass on one value a side with no noise estimate at all.
        row.verdict = GateVerdict::kInconclusive;
        row.noise_note = "noise not judged (" + why + ")";
        row.note = fmt::format(
            "one value on each side and no per-run values inside them: no noise estimate, so "
            "the change of {:+.2f}% can neither fail nor pass the {:g}% threshold; run 2 or "
            "more legs (--reps) against a baseline of 2 or more trials, or a tool format that "
            "keeps every run (hyperfine, Google Benchmark repetitions)",
            change, *m.fail_pct);
      } else {
        if (!row.interval) row.noise_note = "noise not judged (" + why + "): medians compared";
        Decide(m, bad, now_values, &row);
      }
      if (IsCountMetric(m.name, m.unit)) ApplyCountThreshold(m, now, options.fail_count, &row);
    }
    // Show the plain change of a skipped metric too, when both sides have it.
    if (row.verdict == GateVerdict::kSkipped && row.now && m.value != 0 &&
        std::isfinite(*row.now) && it->second.unit == m.unit) {
      row.change_pct = (*row.now - m.value) / std::abs(m.value) * 100.0;
      row.change_in_bad_direction_pct =
          m.better == Better::kHigher ? -*row.change_pct : *row.change_pct;
      row.ratio = *row.now / m.value;
    }
    if (row.ratio) row.ratio_reads = RatioReading("now", "baseline", *row.ratio, m.better, m.unit);
    report.rows.push_back(std::move(row));
  }
  for (const auto& [name, value] : current) {
    (void)value;
    if (baseline.Find(name) == nullptr) report.not_in_baseline.push_back(name);
  }
  report.caveats = ClockCaveats(baseline.clock, current_clock);
  report.simulated = baseline.clock.simulated || current_clock.simulated;
  report.clock_attributed = std::none_of(report.caveats.begin(), report.caveats.end(),
                                         [](const GateCaveat& c) { return c.code != "simulated"; });
  bool any_trials = false;
  for (const auto& m : baseline.metrics) any_trials = any_trials || !m.trials.empty();
  if (!any_trials)
    report.caveats.push_back(
        {"noise_unknown",
         "the baseline keeps no per-trial values (written before vouch kept them): the gate "
         "cannot judge noise and compares medians alone; re-pin it with `vouch baseline`"});

  Counts c = Count(report);
  if (c.fail || c.missing || c.error)
    report.overall = GateVerdict::kFail;
  else if (c.inconclusive)
    report.overall = GateVerdict::kInconclusive;
  else if (c.warn)
    report.overall = GateVerdict::kWarn;
  else
    report.overall = GateVerdict::kPass;
  return report;
}

std::string HeadlineLine(const GateReport& r) {
  if (r.headline.empty()) return "";
  return fmt::format("headline: {} ({})", TerminalSafe(r.headline),
                     TerminalSafe(r.headline_reason));
}

std::string RenderGateText(const GateReport& report) {
  std::vector<std::vector<std::string>> table = {kHeader};
  // Every cell as a terminal shows it: a metric named with escape sequences cannot draw.
  for (const auto& r : report.rows) {
    table.push_back(Cells(r));
    for (auto& c : table.back()) c = TerminalSafe(c);
  }
  std::vector<size_t> width(kHeader.size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  // Numbers right-aligned, words left-aligned.
  const std::vector<bool> right = {false, false, true, true, true, true, false, false, false};
  std::string out;
  if (!report.headline.empty()) out += HeadlineLine(report) + "\n";
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
  for (const auto& c : report.caveats) out += "caveat: " + TerminalSafe(c.message) + "\n";
  if (!report.not_in_baseline.empty()) {
    out += "not gated (not in the baseline):";
    for (const auto& n : report.not_in_baseline) out += " " + TerminalSafe(n);
    out += "\n";
  }
  if (std::string hint = WarnHint(report); !hint.empty()) out += "note: " + hint + "\n";
  if (std::string n = NoiseLine(report); !n.empty()) out += "noise: " + n + "\n";
  if (std::string n = NotJudgedLine(report); !n.empty()) out += "noise: " + TerminalSafe(n) + "\n";
  for (const auto& m : MdeLines(report)) out += "mde: " + TerminalSafe(m) + "\n";
  out += OverallLine(report) + "\n";
  return out;
}

int GateExitCode(const GateReport& report) {
  if (report.overall == GateVerdict::kFail) return 1;
  if (report.overall == GateVerdict::kInconclusive) return kGateExitInconclusive;
  return 0;
}

}  // namespace vouch
