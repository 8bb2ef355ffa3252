#include "verdict/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/modes.h"

namespace vouch::verdict {
namespace {

// Two modes in the baseline's trials and the run's legs taken together, where at least one
// side has values in both clusters (a split that is exactly baseline against run is a shift:
// the gate's own question).
std::optional<std::string> PooledModes(const std::vector<double>& trials,
                                       const std::vector<double>& legs, const std::string& unit) {
  std::vector<double> all = trials;
  all.insert(all.end(), legs.begin(), legs.end());
  auto m = DetectModes(all);
  if (!m.found || m.modes.size() != 2) return std::nullopt;
  const double low_max = m.modes[1].max;  // modes: the higher center first
  auto both = [&](const std::vector<double>& v) {
    bool low = false, high = false;
    for (double x : v) (x <= low_max ? low : high) = true;
    return low && high;
  };
  if (!both(trials) && !both(legs)) return std::nullopt;
  return fmt::format("the baseline's trials and this run's legs together show {}",
                     DescribeModes(m, unit, "values"));
}

}  // namespace

GateModesFound GateModes(const GateReport& report, const Baseline& baseline,
                         const std::map<std::string, CurrentMetric>& now) {
  GateModesFound found;
  for (const auto& row : report.rows) {
    if (row.verdict == GateVerdict::kSkipped || row.verdict == GateVerdict::kMissing ||
        row.verdict == GateVerdict::kError)
      continue;
    std::vector<std::string>& out = row.fail_pct ? found.refuse : found.warn;
    auto it = now.find(row.metric);
    const BaselineMetric* b = baseline.Find(row.metric);
    std::vector<double> legs = it == now.end() ? std::vector<double>{} : it->second.values;
    std::vector<double> trials = b ? b->trials : std::vector<double>{};
    const std::string unit = it == now.end() ? row.unit : it->second.unit;
    bool own = false;
    if (auto m = DetectModes(legs); m.found) {
      out.push_back(fmt::format("{}: this run's legs show {}", row.metric, DescribeModes(m, unit)));
      own = true;
    }
    if (auto m = DetectModes(trials); m.found) {
      out.push_back(fmt::format("{}: the baseline's trials show {}", row.metric,
                                DescribeModes(m, unit, "trials")));
      own = true;
    }
    if (own) continue;
    if (auto p = PooledModes(trials, legs, unit)) {
      out.push_back(fmt::format("{}: {}", row.metric, *p));
    } else if (trials.size() + legs.size() < kModesMinLegs && !legs.empty() && !trials.empty()) {
      found.unchecked.push_back(fmt::format(
          "{}: modes not checkable at {} values (the baseline's {} trial{} and this "
          "run's {} leg{}; the test needs {})",
          row.metric, trials.size() + legs.size(), trials.size(), trials.size() == 1 ? "" : "s",
          legs.size(), legs.size() == 1 ? "" : "s", kModesMinLegs));
    }
  }
  return found;
}

std::size_t GateLegsForModes(const GateReport& report, const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& now, std::string* note) {
  std::size_t more = 0;
  for (const auto& row : report.rows) {
    if (!row.fail_pct || row.verdict == GateVerdict::kSkipped ||
        row.verdict == GateVerdict::kMissing || row.verdict == GateVerdict::kError)
      continue;
    const BaselineMetric* b = baseline.Find(row.metric);
    auto it = now.find(row.metric);
    if (!b || b->trials.empty() || it == now.end() || it->second.values.empty()) continue;
    const std::size_t t = b->trials.size(), l = it->second.values.size();
    if (t + l >= kModesMinLegs || kModesMinLegs - t - l <= more) continue;
    more = kModesMinLegs - t - l;
    if (note)
      *note = fmt::format(
          "{}: modes not checkable at {} values (the baseline's {} trial{} and this run's {} "
          "leg{}): {} more leg{}",
          row.metric, t + l, t, t == 1 ? "" : "s", l, l == 1 ? "" : "s", more,
          more == 1 ? "" : "s");
  }
  return more;
}

std::string GateModesRefusal() {
  return fmt::format(
      "refused: a median over two modes is a number no process ran at (each leg is one process, "
      "and its mode is fixed for its life); find what picks the mode, or pass --allow-modes to "
      "gate over them anyway (the modes test's false-alarm rate is {:g} % per metric on "
      "unimodal legs)",
      kModesFalseAlarmRate * 100);
}

GateFinal DecideGate(const Baseline& baseline, const std::map<std::string, CurrentMetric>& now,
                     const ClockState& clock, const EnvLookup& env,
                     const std::optional<GateLook>& look, const nlohmann::json& legs,
                     const GateRules& rules) {
  GateFinal f;
  f.report = CompareToBaseline(baseline, now, clock, env, look, rules.options);
  f.modes = GateModes(f.report, baseline, now);
  f.json = nlohmann::json::parse(RenderGateJson(f.report));
  if (!f.modes.warn.empty()) f.json["modes_warned"] = f.modes.warn;
  if (!f.modes.unchecked.empty()) f.json["modes_unchecked"] = f.modes.unchecked;
  if (!f.modes.refuse.empty()) {
    if (rules.allow_modes) {
      f.json["modes_allowed"] = f.modes.refuse;
    } else {
      f.refused = true;
      f.json["verdict"] = "refused";
      f.json["refused"] = {{"modes", f.modes.refuse}, {"reason", GateModesRefusal()}};
      f.exit_code = kGateExitModes;
      return f;
    }
  }
  // An undecided wall-clock metric: where a quieter figure is (issue 22 item 9).
  for (const auto& row : f.report.rows)
    if (row.verdict == GateVerdict::kInconclusive && row.metric.rfind("gpu.", 0) != 0) {
      f.host_noise = gputrace::AssessHostNoise(legs, row.metric);
      if (f.host_noise) break;
    }
  if (f.host_noise) f.json["host_noise"] = f.host_noise->ToJson();
  f.exit_code = GateExitCode(f.report);
  return f;
}

Result<std::optional<GateRecordDesign>> GateSequentialDesignOfRecord(const nlohmann::json& rec,
                                                                     const std::string& path) {
  const nlohmann::json* seq = nullptr;
  if (rec.contains("extra") && rec["extra"].is_object() && rec["extra"].contains("gate") &&
      rec["extra"]["gate"].is_object() && rec["extra"]["gate"].contains("sequential"))
    seq = &rec["extra"]["gate"]["sequential"];
  if (!seq || seq->is_null()) return std::optional<GateRecordDesign>{};
  auto count = [&](const char* key) -> std::optional<std::size_t> {
    if (!seq->is_object() || !seq->contains(key) || !(*seq)[key].is_number_unsigned())
      return std::nullopt;
    const auto v = (*seq)[key].get<std::uint64_t>();
    if (v < 1 || v > 100000) return std::nullopt;
    return static_cast<std::size_t>(v);
  };
  auto first = count("first_legs"), every = count("legs_per_look"), max = count("max_legs");
  if (!first && !every && max && seq->is_object() && !seq->contains("first_legs"))
    return Error{
        fmt::format("{}: its sequential gate predates the record keeping its looks (first_legs, "
                    "legs_per_look): gate it again live, or it would be judged as one look",
                    path)};
  if (!first || !every || !max || *first < 2 || *first > *max)
    return Error{
        fmt::format("{}: extra.gate.sequential is not a sequential design (first_legs 2..max_legs, "
                    "legs_per_look and max_legs 1..100000)",
                    path)};
  GateRecordDesign d{*first, *max, *every, 0, std::nullopt};
  if (seq->contains("nominal_alpha_one_sided")) {
    const auto& v = (*seq)["nominal_alpha_one_sided"];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() < 0.5))
      return Error{fmt::format(
          "{}: extra.gate.sequential.nominal_alpha_one_sided is not a level (0 < level < 0.5)",
          path)};
    d.level = v.get<double>();
  }
  return std::optional<GateRecordDesign>{d};
}

Status CheckRecordedLevel(const GateRecordDesign& design, double now, const std::string& path) {
  if (!design.level || std::fabs(*design.level - now) <= 1e-12 * std::max(now, *design.level))
    return OkStatus();
  return Error{fmt::format(
      "{}: its live gate judged its last look at the level {:.6g}, and this vouch computes {:.6g} "
      "for that look (the levels were recalibrated since): gate it again live, or it would get "
      "a verdict at another level",
      path, *design.level, now)};
}

}  // namespace vouch::verdict
