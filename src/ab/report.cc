// The reports of an A/B outcome: the verdict JSON, the text block and the Markdown block.
#include <fmt/format.h>

#include <cmath>

#include "ab/protocol.h"
#include "metrics/ratio.h"
#include "util/escape.h"
#include "util/redact.h"
#include "util/strings.h"

namespace vouch {
namespace {

// The headline's unit, from the first leg that has it ("" when none does).
std::string HeadlineUnit(const AbOutcome& o) {
  for (const auto& l : o.legs)
    if (const Metric* m = FindMetric(l.metrics, o.headline)) return m->unit;
  return "";
}

// The plain B/A quotient of the headline's values with its interval. The statistic itself is
// oriented (d = ln(B/A) for higher-is-better, ln(A/B) for lower-is-better: > 0 means B is
// better), so a lower-is-better headline is turned back into B/A here.
struct PlainRatio {
  double value = 0, lo = 0, hi = 0;
};
std::optional<PlainRatio> BOverA(const AbDecision& d, Better better) {
  if (!d.interval) return std::nullopt;
  if (better == Better::kLower)
    return PlainRatio{1 / d.interval->Ratio(), 1 / d.interval->RatioHi(),
                      1 / d.interval->RatioLo()};
  return PlainRatio{d.interval->Ratio(), d.interval->RatioLo(), d.interval->RatioHi()};
}

nlohmann::json DecisionJson(const AbDecision& d, Better better, const std::string& unit) {
  nlohmann::json j = {
      {"verdict", ToString(d.verdict)},
      {"reasons", d.reasons},
      {"valid_pairs", d.valid_pairs},
      {"band_pct", d.band.Percent()},
      {"band_source", d.band.source == NoiseBand::Source::kCalibrated ? "calibrated" : "given"},
      {"sign_count",
       {{"favour_b", d.signs.favour_b},
        {"favour_a", d.signs.favour_a},
        {"ties", d.signs.ties},
        {"p", d.signs.p_two_sided}}}};
  if (d.interval) {
    j["ratio"] = {{"mean", d.interval->Ratio()},
                  {"lo", d.interval->RatioLo()},
                  {"hi", d.interval->RatioHi()},
                  {"confidence", d.interval->confidence},
                  {"t_p", d.interval->p_two_sided},
                  {"sd_log", d.interval->sd_log},
                  {"reads",
                   "oriented: above 1 means B is better (B/A of a higher-is-better "
                   "metric, A/B of a lower-is-better one)"}};
    auto p = BOverA(d, better);
    j["b_over_a"] = {{"value", p->value},
                     {"lo", p->lo},
                     {"hi", p->hi},
                     {"quantity", QuantityOf(unit)},
                     {"reads", RatioReading("B", "A", p->value, better, unit)}};
  }
  if (d.wilcoxon)
    j["wilcoxon"] = {{"p", d.wilcoxon->p_two_sided},
                     {"method", ToString(d.wilcoxon->method)},
                     {"w_plus", d.wilcoxon->w_plus},
                     {"w_minus", d.wilcoxon->w_minus}};
  if (d.further_pairs) j["further_pairs"] = *d.further_pairs;
  const bool undirected =
      d.verdict == AbVerdict::kNoChange || d.verdict == AbVerdict::kInconclusive;
  auto mde = MinimumDetectableEffectPct(d);
  j["mde_pct"] = undirected && mde ? nlohmann::json(*mde) : nlohmann::json(nullptr);
  if (undirected && d.interval) {
    auto pairs = PairsForEquivalence(d, d.interval->confidence, kDefaultFurtherPairsPower, 2);
    j["equivalence"] = {
        {"test", "TOST: the whole interval inside the band"},
        {"alpha_one_sided", (1 - d.interval->confidence) / 2},
        {"holds", d.verdict == AbVerdict::kNoChange},
        {"pairs_for_band", pairs ? nlohmann::json(*pairs) : nlohmann::json(nullptr)}};
  }
  return j;
}

// "B/A time 1.1070 (95 % CI 1.0900 .. 1.1200; B slower)".
// REFUSED: the A/B is refused, so the ratio is a figure with no direction word (a refused
// verdict says nowhere that B is faster or slower).
std::string RatioText(const AbDecision& d, Better better, const std::string& unit,
                      bool refused = false) {
  auto p = BOverA(d, better);
  if (!p) return "n/a";
  std::string_view word = refused ? "" : RatioWord(p->value, better, unit);
  return fmt::format("B/A {} {:.4f} ({:.0f} % CI {:.4f} .. {:.4f}{})", QuantityOf(unit), p->value,
                     100 * d.interval->confidence, p->lo, p->hi,
                     word.empty()     ? ""
                     : word == "same" ? "; equal"
                                      : fmt::format("; B {}", word));
}

}  // namespace

std::string RenderLookLine(std::size_t look, std::size_t pairs,
                           const std::optional<SequentialStep>& step) {
  return fmt::format("look {} after {} pairs: {}\n", look, pairs,
                     step ? std::string(ToString(step->decision.verdict)) : "n/a");
}

nlohmann::json AbPairsJson(const AbOutcome& o) {
  // d is oriented so that positive means B is better (what the interval and the band are about).
  nlohmann::json pairs = nlohmann::json::array();
  for (size_t i = 0; i < o.pairs.size(); ++i) {
    const AbPairResult& p = o.pairs[i];
    nlohmann::json d;
    if (p.valid && p.a > 0 && p.b > 0)
      d = o.better == Better::kLower ? std::log(p.a / p.b) : std::log(p.b / p.a);
    pairs.push_back({{"block", i / 2},
                     {"a_leg", p.a_leg},
                     {"b_leg", p.b_leg},
                     {"valid", p.valid},
                     {"a", p.a},
                     {"b", p.b},
                     {"d", d},
                     {"clock_a_mhz", p.clock_a},
                     {"clock_b_mhz", p.clock_b},
                     {"reason", p.reason}});
  }
  return {{"headline", o.headline},
          {"better", BetterName(o.better)},
          {"orientations", o.orientations},
          {"pairs", pairs}};
}

nlohmann::json AbVerdictJson(const AbPlan& plan, const AbOutcome& o,
                             const std::vector<std::string>& caveats) {
  const AbDecision& decision = o.decision;
  const AbComparison& cmp = o.comparison;
  const std::string unit = HeadlineUnit(o);
  nlohmann::json v = {
      {"verdict", ToString(decision.verdict)},
      {"headline", o.headline},
      {"headline_reason", o.headline_reason},
      {"better", BetterName(o.better)},
      {"arms", {{"A", plan.a.name}, {"B", plan.b.name}}},
      {"pairs_used", o.pairs_used},
      {"pairs_refused", o.refused.size()},
      {"refused_pairs", o.refused},
      {"seed", plan.seed},
      {"orientations", o.orientations},
      {"mode", o.sequential ? "sequential" : "fixed"},
      {"decision", DecisionJson(decision, o.better, unit)},
      {"clock_normalised", DecisionJson(cmp.clock_normalised, o.better, unit)},
      {"clock_explained_pct", cmp.clock_explained_log
                                  ? nlohmann::json(100 * (std::exp(*cmp.clock_explained_log) - 1))
                                  : nlohmann::json()},
      {"sm_clock",
       {{"A", {{"median_mhz", o.clock_a.median_mhz}, {"mean_mhz", o.clock_a.mean_mhz}}},
        {"B", {{"median_mhz", o.clock_b.median_mhz}, {"mean_mhz", o.clock_b.mean_mhz}}}}},
      {"caveats", caveats},
      // Every measured pair (AbPairsJson): d for the report's chart, values and clocks for
      // vouch fleet's pooling over nodes.
      {"pairs", AbPairsJson(o)["pairs"]},
      {"band_log", o.band.half_width_log}};
  if (decision.verdict == AbVerdict::kRefused) {
    // A refused A/B has no direction: no field may read as one.
    for (const char* k : {"decision", "clock_normalised"}) {
      v[k]["verdict"] = ToString(AbVerdict::kRefused);
      if (v[k].contains("b_over_a")) v[k]["b_over_a"].erase("reads");
      if (v[k].contains("ratio")) v[k]["ratio"].erase("reads");
    }
  }
  if (o.sequential && o.last_step)
    v["sequential"] = {{"looks", o.looks}, {"nominal_confidence", o.last_step->nominal_confidence}};
  return v;
}

namespace {

// The smallest effect the verdict could see and, for `no change` and `inconclusive`, the
// equivalence claim and the pairs that would make it (issue 23 item 2).
std::string MdeText(const AbDecision& d) {
  if (d.verdict != AbVerdict::kNoChange && d.verdict != AbVerdict::kInconclusive) return "";
  auto mde = MinimumDetectableEffectPct(d);
  if (!mde || !d.interval) return "";
  std::string text = fmt::format(
      "  mde       this A/B could not have seen an effect smaller than {:.2f} % (the band "
      "+/- {:.3f} % plus the interval's half width {:.3f} %)\n",
      *mde, d.band.Percent(), 100 * std::expm1(d.interval->half_width_log));
  const double side = 100 * (1 - d.interval->confidence) / 2;
  if (d.verdict == AbVerdict::kNoChange)
    text += fmt::format(
        "  equivalence: the whole {:.3g} % interval lies inside the +/- {:.3f} % band (TOST, "
        "{:.3g} % a side): an A/B whose true effect is outside the band says no change at most "
        "{:.3g} % of the time\n",
        100 * d.interval->confidence, d.band.Percent(), side, side);
  else if (auto pairs =
               PairsForEquivalence(d, d.interval->confidence, kDefaultFurtherPairsPower, 2))
    text += fmt::format(
        "  about {} pairs in all would bring the +/- {:.3f} % band within reach at the measured "
        "noise (sd {:.3f} %): a no-change claim (TOST, {:.3g} % a side) needs the whole interval "
        "inside the band\n",
        *pairs, d.band.Percent(), 100 * d.interval->sd_log, side);
  return text;
}

}  // namespace

std::string RenderAbText(const AbPlan& plan, const AbOutcome& o, const AbReportContext& context) {
  const AbDecision& decision = o.decision;
  const AbComparison& cmp = o.comparison;
  const Arm& a = plan.a;
  const Arm& b = plan.b;
  const std::string unit = HeadlineUnit(o);
  std::string text;
  text += fmt::format("A/B verdict: {}\n", ToString(decision.verdict));
  if (context.simulated) text += "  (SIMULATED DEVICE: clocks are a replay)\n";
  text += fmt::format("  headline  {} ({} is better; {})\n",
                      o.headline.empty() ? "?" : TerminalSafe(o.headline), BetterName(o.better),
                      o.headline_reason.empty() ? "not chosen" : TerminalSafe(o.headline_reason));
  // An arm as a terminal may show it: its command and variables redacted, then escaped.
  const auto arm = [](const Arm& x, const std::vector<std::string>& env) {
    return TerminalSafe(
        fmt::format("{}: {}{}", x.name, ShellJoin(RedactArgv(x.argv)),
                    env.empty() ? "" : fmt::format(" [{}]", fmt::join(RedactArgv(env), " "))));
  };
  text += fmt::format("  arms      A = {}\n            B = {}\n", arm(a, context.a_env),
                      arm(b, context.b_env));
  text += fmt::format("  pairs     {} used, {} refused ({} mode, seed {}, blocks {})\n",
                      o.pairs_used, o.refused.size(), o.sequential ? "sequential" : "fixed",
                      plan.seed, fmt::join(o.orientations, " "));
  const bool refused = decision.verdict == AbVerdict::kRefused;
  text +=
      fmt::format("  ratio     {}{}\n", TerminalSafe(RatioText(decision, o.better, unit, refused)),
                  refused ? " (not a verdict: the A/B is refused)" : "");
  text += fmt::format("  clock-normalised {}{}\n",
                      TerminalSafe(RatioText(cmp.clock_normalised, o.better, unit, refused)),
                      cmp.clock_explained_log
                          ? fmt::format("; the clock explains {:+.3f} %",
                                        100 * (std::exp(*cmp.clock_explained_log) - 1))
                          : "");
  text +=
      fmt::format("  band      +/- {:.3f} % ({})\n", decision.band.Percent(),
                  decision.band.source == NoiseBand::Source::kCalibrated
                      ? fmt::format("calibrated from {} A/A pairs", decision.band.calibration_pairs)
                      : std::string("given"));
  if (decision.wilcoxon)
    text += fmt::format("  Wilcoxon signed-rank p = {:.4g} ({}); paired t p = {:.4g}\n",
                        decision.wilcoxon->p_two_sided, ToString(decision.wilcoxon->method),
                        decision.interval ? decision.interval->p_two_sided : 1.0);
  text +=
      fmt::format("  sign count {} of {} pairs favour B (p = {:.4g})\n", decision.signs.favour_b,
                  decision.signs.favour_a + decision.signs.favour_b + decision.signs.ties,
                  decision.signs.p_two_sided);
  text += fmt::format(
      "  SM clock  A median {:.0f} mean {:.1f} MHz; B median {:.0f} mean {:.1f} MHz\n",
      o.clock_a.median_mhz, o.clock_a.mean_mhz, o.clock_b.median_mhz, o.clock_b.mean_mhz);
  if (decision.further_pairs)
    text += fmt::format("  about {} more pairs would likely decide it\n", *decision.further_pairs);
  text += MdeText(decision);
  for (const auto& r : decision.reasons) text += fmt::format("  - {}\n", TerminalSafe(r));
  for (const auto& c : context.caveats) text += fmt::format("  caveat: {}\n", TerminalSafe(c));
  return text;
}

std::string RenderAbMarkdown(const AbOutcome& o, const std::vector<std::string>& caveats) {
  const AbDecision& decision = o.decision;
  const bool refused = decision.verdict == AbVerdict::kRefused;
  const std::string unit = HeadlineUnit(o);
  std::string md = fmt::format(
      "### vouch A/B: **{}**\n\n| | |\n|---|---|\n| headline | {} ({} is better) |\n"
      "| pairs | {} used, {} refused |\n| ratio | {} |\n| clock-normalised | {} |\n"
      "| band | ±{:.3f} % |\n| SM clock A / B (mean) | {:.1f} / {:.1f} MHz |\n",
      ToString(decision.verdict), MarkdownCode(o.headline), BetterName(o.better), o.pairs_used,
      o.refused.size(), MarkdownCell(RatioText(decision, o.better, unit, refused)),
      MarkdownCell(RatioText(o.comparison.clock_normalised, o.better, unit, refused)),
      decision.band.Percent(), o.clock_a.mean_mhz, o.clock_b.mean_mhz);
  const bool undirected =
      decision.verdict == AbVerdict::kNoChange || decision.verdict == AbVerdict::kInconclusive;
  if (auto mde = MinimumDetectableEffectPct(decision); undirected && mde)
    md += fmt::format("| smallest effect it could see | {:.2f} % |\n", *mde);
  for (const auto& c : caveats) md += fmt::format("\n- caveat: {}", MarkdownCell(c));
  md += "\n";
  return md;
}

}  // namespace vouch
