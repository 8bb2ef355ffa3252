// vouch ab: is B faster than A? Two arms (two commands, or one command with two
// environments), one discarded warm-up leg per arm, ABBA blocks in a seeded random
// orientation, one window per leg, the pairing rules for every pair, and a verdict from
// the paired statistics (src/stats) against a noise band.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "ab/arms.h"
#include "run_common.h"
#include "stats/ab_stats.h"
#include "stats/sequential.h"
#include "util/fs.h"
#include "util/strings.h"

namespace vouch::cli {
namespace {

enum AbExit { kAbDecided = 0, kAbInconclusive = 2, kAbRefused = 3, kAbFailOn = 5 };

// Splits a command string into words: whitespace separates, '…' and "…" quote. Never a shell.
Result<std::vector<std::string>> Words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      any = true;
    } else if (c == ' ' || c == '\t') {
      if (any || !cur.empty()) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (quote) return MakeError("unbalanced quote in '{}'", s);
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

struct PairResult {
  int a_leg = -1, b_leg = -1;
  bool valid = false;
  std::string reason;
  double a = 0, b = 0, clock_a = 0, clock_b = 0;
};

const Metric* Headline(const LegRecord& l, const std::string& name) {
  return FindMetric(l.metrics, name);
}

// Over several GPUs, the slowest busy GPU's clock paces the leg (clock/window.h).
double MeanClock(const LegRecord& l) { return PacingClockMean(l.window).value_or(0); }

PairResult Judge(const RunContext& ctx, int ia, int ib, const std::string& headline,
                 bool cross_boot) {
  const auto& la = ctx.record.legs[static_cast<size_t>(ia)];
  const auto& lb = ctx.record.legs[static_cast<size_t>(ib)];
  PairResult p;
  p.a_leg = ia;
  p.b_leg = ib;
  std::vector<std::string> why;
  if (!la.valid)
    why.push_back(fmt::format("leg {} (A) invalid: {}", ia, fmt::join(la.reasons, "; ")));
  if (!lb.valid)
    why.push_back(fmt::format("leg {} (B) invalid: {}", ib, fmt::join(lb.reasons, "; ")));
  const Metric* ma = Headline(la, headline);
  const Metric* mb = Headline(lb, headline);
  if (la.valid && !ma) why.push_back(fmt::format("leg {} has no '{}'", ia, headline));
  if (lb.valid && !mb) why.push_back(fmt::format("leg {} has no '{}'", ib, headline));
  if (why.empty()) {
    auto pv = PairWindows(la.window, lb.window, ctx.record.policy, cross_boot);
    if (!pv.paired)
      for (const auto& r : pv.rules)
        if (!r.pass && !r.waived)
          why.push_back(fmt::format("pairing rule '{}' failed: A {} / B {}", r.rule, r.a, r.b));
  }
  if (!why.empty()) {
    p.reason = fmt::format("pair of legs {} and {}: {}", ia, ib, fmt::join(why, "; "));
    return p;
  }
  p.valid = true;
  p.a = ma->value;
  p.b = mb->value;
  p.clock_a = MeanClock(la);
  p.clock_b = MeanClock(lb);
  return p;
}

nlohmann::json DecisionJson(const AbDecision& d) {
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
  if (d.interval)
    j["ratio"] = {{"mean", d.interval->Ratio()},    {"lo", d.interval->RatioLo()},
                  {"hi", d.interval->RatioHi()},    {"confidence", d.interval->confidence},
                  {"t_p", d.interval->p_two_sided}, {"sd_log", d.interval->sd_log}};
  if (d.wilcoxon)
    j["wilcoxon"] = {{"p", d.wilcoxon->p_two_sided},
                     {"method", ToString(d.wilcoxon->method)},
                     {"w_plus", d.wilcoxon->w_plus},
                     {"w_minus", d.wilcoxon->w_minus}};
  if (d.further_pairs) j["further_pairs"] = *d.further_pairs;
  return j;
}

std::string RatioText(const AbDecision& d) {
  if (!d.interval) return "n/a";
  return fmt::format("{:.4f} ({:.0f} % CI {:.4f} .. {:.4f})", d.interval->Ratio(),
                     100 * d.interval->confidence, d.interval->RatioLo(), d.interval->RatioHi());
}

}  // namespace

int CmdAb(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{
      "Is B faster than A? Paired, counterbalanced A/B legs with clock windows and a verdict.\n"
      "Two commands: --a 'CMD ARGS' --b 'CMD ARGS'; one command, two environments (preferred): "
      "--a-env K=V --b-env K=V -- CMD ARGS.\n"
      "Exit: 0 decided (B faster, B slower, no change), 2 inconclusive, 3 refused, 5 B slower with "
      "--fail-on slower, 1 error",
      "ab"};
  RunFlags f;
  std::string a_cmd, b_cmd, a_name = "A", b_name = "B", headline, fail_on, markdown;
  std::vector<std::string> a_env, b_env;
  int pairs = 8, calibrate = 0;
  std::optional<int> max_pairs;
  std::optional<std::uint64_t> seed;
  double band_pct = 1.0, confidence = 0.95;
  bool cross_boot = false;
  ArmInput arms_a, arms_b;
  std::vector<std::string> controls, sources;
  app.add_option("--a", a_cmd,
                 "arm A's command (words; quotes group; never a shell unless --shell)");
  app.add_option("--b", b_cmd, "arm B's command");
  app.add_option("--a-env", a_env, "K=V for arm A (with one command after --)");
  app.add_option("--b-env", b_env, "K=V for arm B");
  app.add_option("--a-name", a_name, "arm A's name (A)");
  app.add_option("--b-name", b_name, "arm B's name (B)");
  app.add_option("--headline", headline,
                 "the metric the verdict is about (default: the only user metric)");
  app.add_option("--pairs", pairs,
                 "pairs to run (fixed design; rounded up to whole ABBA blocks) (8)")
      ->check(CLI::Range(2, 10000));
  app.add_option("--max-pairs", max_pairs,
                 "sequential mode: decide after each block, at most this many pairs")
      ->check(CLI::Range(4, 1000));
  app.add_option("--seed", seed, "seed of the block orientations (default: random, recorded)");
  app.add_option("--calibrate", calibrate,
                 "run K A/A pairs first; the band is the 95th percentile of their |d|")
      ->check(CLI::Range(0, 1000));
  app.add_option("--band", band_pct, "noise band in percent when not calibrated (1)");
  app.add_option("--confidence", confidence, "confidence of the interval (0.95)");
  app.add_flag("--allow-cross-boot", cross_boot,
               "pair legs across boots (waives the boot id only; a caveat)");
  app.add_option("--fail-on", fail_on, "'slower': exit 5 when the verdict is B slower (for CI)")
      ->check(CLI::IsMember({"slower"}));
  app.add_option("--markdown", markdown, "also write the verdict as Markdown");
  app.add_option("--artifact-a", arms_a.artifacts, "arm A's artifact to hash (vouch arms)");
  app.add_option("--artifact-b", arms_b.artifacts, "arm B's artifact");
  app.add_option("--root-a", arms_a.roots, "arm A's build/source root");
  app.add_option("--root-b", arms_b.roots, "arm B's build/source root");
  app.add_option("--control", controls, "NAME A B: a behavioural control")->expected(3);
  app.add_option("--source", sources, "NAME PATH_A PATH_B: a source control")->expected(3);
  f.Add(app, false);
  f.warmup = 1;
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch ab: {}\n", m); };

  // The arms.
  Arm a, b;
  a.name = a_name;
  b.name = b_name;
  auto common_env = ParseEnv(f.env);
  auto ae = ParseEnv(a_env);
  auto be = ParseEnv(b_env);
  if (!common_env || !ae || !be)
    return say((!common_env ? common_env : !ae ? ae : be).error().message), kExitUsage;
  if (!cmd.empty()) {
    if (!a_cmd.empty() || !b_cmd.empty())
      return say("give either --a/--b or one command after --, not both"), kExitUsage;
    a.argv = b.argv = cmd;
  } else {
    auto wa = Words(a_cmd), wb = Words(b_cmd);
    if (!wa || !wb) return say((!wa ? wa : wb).error().message), kExitUsage;
    a.argv = *wa;
    b.argv = *wb;
  }
  if (a.argv.empty() || b.argv.empty())
    return say("no command: give --a and --b, or -- CMD with --a-env/--b-env"), kExitUsage;
  if (a_name == b_name) return say("the two arms need different names"), kExitUsage;
  a.env = *common_env;
  b.env = *common_env;
  a.env.insert(a.env.end(), ae->begin(), ae->end());
  b.env.insert(b.env.end(), be->begin(), be->end());
  a.cwd = b.cwd = f.cwd;
  a.shell = b.shell = f.shell;

  // Two arms must be two arms.
  nlohmann::json arms_json;
  for (size_t i = 0; i + 2 < controls.size(); i += 3) {
    arms_a.behavioural[controls[i]] = controls[i + 1];
    arms_b.behavioural[controls[i]] = controls[i + 2];
  }
  for (size_t i = 0; i + 2 < sources.size(); i += 3) {
    arms_a.sources.push_back({sources[i], sources[i + 1]});
    arms_b.sources.push_back({sources[i], sources[i + 2]});
  }
  if (!arms_a.artifacts.empty() || !arms_b.artifacts.empty() || !controls.empty() ||
      !sources.empty()) {
    auto rep = CheckArms(arms_a, arms_b);
    if (!rep) return say(rep.error().message), kExitError;
    arms_json = nlohmann::json::parse(RenderArmsJson(*rep));
    if (!rep->distinct) {
      fmt::print("{}", RenderArmsText(*rep));
      say("refused: the two arms are not shown to be two arms (see above); no leg was run");
      return kAbRefused;
    }
  }

  if (a.argv == b.argv && a.env == b.env)
    return say("arms A and B are one arm: the same command with the same environment; an A/B of "
               "one arm "
               "measures nothing (use --calibrate for an A/A)"),
           kAbRefused;

  NoiseBand band;
  if (calibrate == 0) {
    auto nb = NoiseBandFromPercent(band_pct);
    if (!nb)
      return say(fmt::format("--band {}: must be a positive percentage", band_pct)), kExitUsage;
    band = *nb;
  }
  std::uint64_t s = seed ? *seed : std::random_device{}();
  std::mt19937_64 rng(s);
  std::string metric_name = headline;

  std::vector<std::string> argv = {"ab"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!seed) argv.insert(argv.begin() + 1, {"--seed", std::to_string(s)});
  RunContext ctx;
  if (int rc = PrepareRun(g, f, {a, b}, "ab", argv, &ctx); rc >= 0) return rc;
  int blocks = max_pairs ? (*max_pairs + 1) / 2 : (pairs + 1) / 2;
  int cal_blocks = (calibrate + 1) / 2;
  ctx.record.planned_legs = 2 * f.warmup + 4 * cal_blocks + 4 * blocks;
  ctx.record.extra["seed"] = s;
  ctx.record.extra["arms_check"] = arms_json;

  auto headline_of = [&](const LegRecord& l) -> bool {
    if (!metric_name.empty()) return true;
    std::vector<std::string> user;
    for (const auto& m : l.metrics)
      if (!m.text && m.name.rfind("vouch.", 0) != 0) user.push_back(m.name);
    if (user.size() == 1) metric_name = user[0];
    return !metric_name.empty();
  };

  // One block: two pairs in ABBA or BAAB order. Returns false when interrupted.
  std::vector<std::string> orientations;
  auto block = [&](const Arm& x, const Arm& y, std::vector<PairResult>& out,
                   const char* role) -> bool {
    bool abba = (rng() & 1) == 0;
    orientations.push_back(abba ? "ABBA" : "BAAB");
    const Arm* order[4] = {&x, &y, &y, &x};
    if (!abba) order[0] = &y, order[1] = &x, order[2] = &x, order[3] = &y;
    int first = static_cast<int>(ctx.record.legs.size());
    for (const Arm* arm : order)
      if (!RunOneLeg(ctx, *arm, role)) return false;
    for (int k = first; k < first + 4; ++k) headline_of(ctx.record.legs[static_cast<size_t>(k)]);
    int ia1 = abba ? first : first + 1, ib1 = abba ? first + 1 : first;
    int ia2 = abba ? first + 3 : first + 2, ib2 = abba ? first + 2 : first + 3;
    out.push_back(Judge(ctx, ia1, ib1, metric_name, cross_boot));
    out.push_back(Judge(ctx, ia2, ib2, metric_name, cross_boot));
    return true;
  };

  bool go = true;
  for (int i = 0; go && i < f.warmup; ++i)
    go = RunOneLeg(ctx, a, "warmup") && RunOneLeg(ctx, b, "warmup");
  // A/A calibration with arm A on both sides (same protocol).
  std::vector<PairResult> cal;
  Arm a2 = a;
  a2.name = a.name + "'";
  for (int i = 0; go && i < cal_blocks; ++i) go = block(a, a2, cal, "calibration");
  if (go && calibrate > 0) {
    std::vector<double> aa;
    for (const auto& p : cal)
      if (p.valid) {
        auto d = PairLogRatio(p.a, p.b, MetricDirection::kHigherIsBetter);
        if (d) aa.push_back(*d);
      }
    auto nb = NoiseBandFromCalibration(aa);
    if (!nb) {
      say(fmt::format("calibration gave {} valid A/A pairs of {}: too few for a band", aa.size(),
                      cal.size()));
      ctx.record.status = "failed";
      (void)FinishRun(ctx, false);
      return kAbRefused;
    }
    band = *nb;
  }

  std::vector<PairResult> res;
  std::optional<SequentialDesign> design;
  AbOptions ab_opts;
  ab_opts.confidence = confidence;
  if (max_pairs) {
    SequentialPlan plan;
    plan.max_pairs = static_cast<size_t>(blocks * 2);
    plan.confidence = confidence;
    design = MakeSequentialDesign(plan);
    if (!design) return say("cannot build the sequential design"), kExitError;
  }
  std::optional<SequentialStep> last_step;
  size_t look = 0;
  for (int i = 0; go && i < blocks; ++i) {
    go = block(a, b, res, "measured");
    if (!go || !design || metric_name.empty()) continue;
    size_t done_pairs = res.size();
    while (look < design->look_pairs.size() && done_pairs >= design->look_pairs[look]) {
      ++look;
      std::vector<double> d;
      std::vector<std::string> bad;
      for (const auto& p : res) {
        if (!p.valid) {
          bad.push_back(p.reason);
          continue;
        }
        const Metric* m = Headline(ctx.record.legs[static_cast<size_t>(p.a_leg)], metric_name);
        auto x = PairLogRatio(p.a, p.b,
                              m->better == Better::kLower ? MetricDirection::kLowerIsBetter
                                                          : MetricDirection::kHigherIsBetter);
        if (x) d.push_back(*x);
      }
      last_step = SequentialLook(d, look, *design, band, bad);
      fmt::print(stderr, "look {} after {} pairs: {}\n", look, done_pairs,
                 last_step ? std::string(ToString(last_step->decision.verdict)) : "n/a");
      if (last_step && last_step->stop) go = false;
    }
    if (last_step && last_step->stop) break;
  }

  // The verdict, plain and clock-normalised.
  Better better = Better::kHigher;
  std::vector<AbPair> used;
  std::vector<std::string> refused;
  for (const auto& p : res) {
    if (!p.valid) {
      refused.push_back(p.reason);
      continue;
    }
    used.push_back({p.a, p.b, p.clock_a, p.clock_b});
    const Metric* m = Headline(ctx.record.legs[static_cast<size_t>(p.a_leg)], metric_name);
    if (m) better = m->better;
  }
  std::vector<std::string> setup_reasons = refused;
  if (metric_name.empty())
    setup_reasons.push_back("no headline metric: give --headline NAME (and --metric)");
  if (better == Better::kNone)
    setup_reasons.push_back(
        fmt::format("metric '{}' has no direction (higher or lower is better)", metric_name));
  AbComparison cmp = CompareArms(
      used,
      better == Better::kLower ? MetricDirection::kLowerIsBetter : MetricDirection::kHigherIsBetter,
      band, ab_opts, setup_reasons);
  AbDecision decision = cmp.plain;
  if (design && last_step) {
    decision = last_step->decision;  // the sequential look's verdict at its corrected level
  }
  if (metric_name.empty() || better == Better::kNone) decision.verdict = AbVerdict::kRefused;

  // Clock medians and means per arm.
  auto clock_of = [&](const std::string& arm) {
    std::vector<double> med, mean;
    for (const auto& l : ctx.record.legs)
      if (l.arm == arm && l.role == "measured" && l.valid && PacingClockMedian(l.window) &&
          PacingClockMean(l.window)) {
        med.push_back(*PacingClockMedian(l.window));
        mean.push_back(*PacingClockMean(l.window));
      }
    double m1 = 0, m2 = 0;
    for (double x : med) m1 += x;
    for (double x : mean) m2 += x;
    return std::pair<double, double>{med.empty() ? 0 : m1 / static_cast<double>(med.size()),
                                     mean.empty() ? 0 : m2 / static_cast<double>(mean.size())};
  };
  auto [ca_med, ca_mean] = clock_of(a.name);
  auto [cb_med, cb_mean] = clock_of(b.name);
  nlohmann::json v = {
      {"verdict", ToString(decision.verdict)},
      {"headline", metric_name},
      {"better", BetterName(better)},
      {"arms", {{"A", a.name}, {"B", b.name}}},
      {"pairs_used", used.size()},
      {"pairs_refused", refused.size()},
      {"refused_pairs", refused},
      {"seed", s},
      {"orientations", orientations},
      {"mode", design ? "sequential" : "fixed"},
      {"decision", DecisionJson(decision)},
      {"clock_normalised", DecisionJson(cmp.clock_normalised)},
      {"clock_explained_pct", cmp.clock_explained_log
                                  ? nlohmann::json(100 * (std::exp(*cmp.clock_explained_log) - 1))
                                  : nlohmann::json()},
      {"sm_clock",
       {{"A", {{"median_mhz", ca_med}, {"mean_mhz", ca_mean}}},
        {"B", {{"median_mhz", cb_med}, {"mean_mhz", cb_mean}}}}},
      {"caveats", ctx.record.caveats}};
  if (design && last_step)
    v["sequential"] = {{"looks", look}, {"nominal_confidence", last_step->nominal_confidence}};
  ctx.record.extra["verdict"] = v;
  int rc = FinishRun(ctx, false);
  if (rc == kExitInterrupted) return rc;

  // The verdict block.
  std::string text;
  text += fmt::format("A/B verdict: {}\n", ToString(decision.verdict));
  if (ctx.device && ctx.device->Simulated()) text += "  (SIMULATED DEVICE: clocks are a replay)\n";
  text += fmt::format("  headline  {} ({} is better)\n", metric_name.empty() ? "?" : metric_name,
                      BetterName(better));
  text += fmt::format(
      "  arms      A = {}: {}{}\n            B = {}: {}{}\n", a.name, ShellJoin(a.argv),
      a_env.empty() ? "" : fmt::format(" [{}]", fmt::join(a_env, " ")), b.name, ShellJoin(b.argv),
      b_env.empty() ? "" : fmt::format(" [{}]", fmt::join(b_env, " ")));
  text +=
      fmt::format("  pairs     {} used, {} refused ({} mode, seed {}, blocks {})\n", used.size(),
                  refused.size(), design ? "sequential" : "fixed", s, fmt::join(orientations, " "));
  text += fmt::format("  ratio B/A {}\n", RatioText(decision));
  text += fmt::format("  clock-normalised ratio {}{}\n", RatioText(cmp.clock_normalised),
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
  text +=
      fmt::format("  SM clock  A median {:.0f} mean {:.1f} MHz; B median {:.0f} mean {:.1f} MHz\n",
                  ca_med, ca_mean, cb_med, cb_mean);
  if (decision.further_pairs)
    text += fmt::format("  about {} more pairs would likely decide it\n", *decision.further_pairs);
  for (const auto& r : decision.reasons) text += fmt::format("  - {}\n", r);
  for (const auto& c : ctx.record.caveats) text += fmt::format("  caveat: {}\n", c);
  if (f.json)
    fmt::print("{}\n", v.dump(2));
  else
    fmt::print("{}", text);
  if (!markdown.empty()) {
    std::string md = fmt::format(
        "### vouch A/B: **{}**\n\n| | |\n|---|---|\n| headline | `{}` ({} is better) |\n"
        "| pairs | {} used, {} refused |\n| ratio B/A | {} |\n| clock-normalised | {} |\n"
        "| band | ±{:.3f} % |\n| SM clock A / B (mean) | {:.1f} / {:.1f} MHz |\n",
        ToString(decision.verdict), metric_name, BetterName(better), used.size(), refused.size(),
        RatioText(decision), RatioText(cmp.clock_normalised), decision.band.Percent(), ca_mean,
        cb_mean);
    for (const auto& c : ctx.record.caveats) md += fmt::format("\n- caveat: {}", c);
    md += "\n";
    if (auto st = WriteFileAtomic(markdown, md); !st) return say(st.error().message), kExitError;
  }
  switch (decision.verdict) {
    case AbVerdict::kBSlower:
      return fail_on == "slower" ? kAbFailOn : kAbDecided;
    case AbVerdict::kBFaster:
    case AbVerdict::kNoChange:
      return kAbDecided;
    case AbVerdict::kInconclusive:
      return kAbInconclusive;
    case AbVerdict::kRefused:
      return kAbRefused;
  }
  return kExitError;
}

}  // namespace vouch::cli
