// vouch baseline: N cold trials (fresh processes), the median per metric and every trial's
// value, pinned with the clock state they were taken at (vouch gate: cmd_gate.cc).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "gate/gate.h"
#include "gate_hints.h"
#include "gputrace/host_noise.h"
#include "metrics/headline.h"
#include "number_flag.h"
#include "run_common.h"
#include "stats/modes.h"
#include "util/escape.h"
#include "util/file_claim.h"
#include "util/fs.h"
#include "verdict/gate.h"

namespace vouch::cli {
namespace {

bool Gateable(const MetricSummary& s) {
  if (s.better == Better::kNone) return false;
  if (s.name == "vouch.wall_s" || s.name == "vouch.peak_rss_bytes") return false;  // host facts
  return true;
}

// The legs a gate runs by default (RunFlags::reps): the baseline's noise warning assumes it.
constexpr int kGateDefaultLegs = 3;

// The baseline of the run's valid measured legs: values per gateable metric, the headline
// (HEADLINE, or what the tool means), thresholds from OPTIONS.
Result<Baseline> BaselineFromLegs(const RunContext& ctx, std::string headline,
                                  const BaselineOptions& bo) {
  std::vector<BaselineInput> inputs;
  std::map<std::string, size_t> at;
  for (const auto& l : ctx.record.legs) {
    if (l.role != "measured" || !l.valid) continue;
    for (const auto& m : l.metrics) {
      if (m.text) continue;
      MetricSummary probe{m.name,  m.unit,  m.better, 1,           m.value,
                          m.value, m.value, m.value,  std::nullopt};
      if (!Gateable(probe)) continue;
      if (!at.count(m.name)) {
        at[m.name] = inputs.size();
        inputs.push_back({m.name, m.unit, m.better, {}, m.config});
      }
      inputs[at[m.name]].values.push_back(m.value);
      if (inputs[at[m.name]].values.size() == 1) inputs[at[m.name]].samples = m.samples;
    }
  }
  if (inputs.empty()) {
    std::vector<Metric> first;
    for (const auto& l : ctx.record.legs)
      if (l.role == "measured" && l.valid) first = l.metrics;
    return MakeError("no metric with a direction to pin: {}", NoMetricToPin(first));
  }
  std::string headline_reason = "given with --headline";
  if (headline.empty()) {
    // What the tool means by its result, from the first valid trial's metrics.
    std::vector<Metric> first;
    for (const auto& l : ctx.record.legs)
      if (l.role == "measured" && l.valid) {
        first = l.metrics;
        break;
      }
    std::erase_if(first, [&](const Metric& m) { return !at.count(m.name); });
    if (auto h = ChooseHeadline(first)) {
      headline = h->name;
      headline_reason = h->reason;
    } else {
      headline = inputs.front().name;
      headline_reason = "the only metrics with a direction are vouch's own; give --headline NAME";
    }
  }
  auto b = MakeBaseline(inputs, headline, RecordClockState(ToJson(ctx.record), "run"), bo);
  if (b) b->headline_reason = headline_reason;
  return b;
}

}  // namespace

int CmdBaseline(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{
      "Pin a baseline: N cold trials (each a fresh process), the median and every trial's value "
      "per metric, thresholds and the clock state. A warning says when the trials' spread cannot "
      "resolve a threshold, and how many trials would. An existing baseline file is refused "
      "unless --overwrite.\nExit: 0 written, 1 no valid trial or the file exists",
      "baseline"};
  RunFlags f;
  int trials = 5;
  std::string file = "baseline.json", headline;
  double headline_fail = 3, secondary_warn = 5, vram_fail = 10;
  f.warmup = 0;
  app.add_option("--trials", trials, "cold trials (5)")->check(NumberFlag(Count(1, 1000)));
  int max_trials = 0;
  app.add_option("--max-trials", max_trials,
                 "grow the baseline to as many trials as its spread needs to resolve its fail "
                 "thresholds, at most N (Stein's two-stage design: one growth step after the "
                 "--trials; 0: off)")
      ->check(NumberFlag(Count(0, 1000)));
  app.add_option("--warmup", f.warmup, "warm-up legs before the trials (0: trials are cold)")
      ->check(NumberFlag(Count(0, 1000)));
  app.add_option("--baseline", file, "baseline file to write (baseline.json)");
  app.add_option("--headline", headline,
                 "the headline metric (default: what the tool means: nvbench GPU time, Google "
                 "Benchmark real time, llama-bench tg tokens/s, vllm output throughput; else the "
                 "first metric with a direction)");
  app.add_option("--headline-fail-pct", headline_fail,
                 "fail threshold of the headline metric (3 %)")
      ->check(NumberFlag(NotNegative(1e6)));
  app.add_option("--secondary-warn-pct", secondary_warn, "warn threshold of other metrics (5 %)")
      ->check(NumberFlag(NotNegative(1e6)));
  app.add_option("--vram-fail-pct", vram_fail, "fail threshold of peak device memory (10 %)")
      ->check(NumberFlag(NotNegative(1e6)));
  std::vector<std::string> threshold_specs;
  std::optional<double> fail_all;
  AddThresholdFlags(app, &threshold_specs, &fail_all);
  f.Add(app, false);
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  f.reps = trials;
  auto overrides = ParseThresholdSpecs(threshold_specs);
  if (!overrides)
    return fmt::print(stderr, "vouch baseline: {}\n", overrides.error().message), kExitUsage;
  BaselineOptions bo;
  bo.overrides = *overrides;
  bo.fail_pct_all = fail_all;
  bo.headline_fail_pct = headline_fail;
  bo.secondary_warn_pct = secondary_warn;
  bo.vram_fail_pct = vram_fail;
  // An earlier baseline holds its trials: replacing it silently would lose them (as a run
  // directory that holds a run is refused). Claimed before any leg runs, like the run folder:
  // a second vouch baseline given the same FILE is refused while this one runs.
  auto claim = FileClaim::Claim(file, f.overwrite, "baseline");
  if (!claim) {
    fmt::print(stderr, "vouch baseline: {}\n", claim.error().message);
    return kExitError;
  }
  auto env = ParseEnv(f.env);
  if (!env) return fmt::print(stderr, "vouch baseline: {}\n", env.error().message), kExitUsage;
  Arm arm{"run", cmd, *env, f.cwd, f.shell};
  std::vector<std::string> argv = {"baseline"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunContext ctx;
  f.default_out = std::filesystem::path(file).replace_extension("").string() + "-record";
  if (int rc = PrepareRun(g, f, {arm}, "baseline", argv, &ctx); rc >= 0) return rc;
  // A --headline the trials do not report, metrics without a direction: said at the first
  // trial, not after all of them (gate_hints.h).
  ctx.first_leg_check = [&headline](const LegRecord& l) {
    std::string why = HeadlineProblem(l.metrics, headline);
    return why.empty() ? NoDirectionProblem(l.metrics) : why;
  };
  RunWarmupAndMeasured(ctx, arm, f.warmup, f.reps);
  int first_stage = 0;  // the first stage's trials when the baseline grew
  const bool growth_rule = max_trials > trials && !ctx.interrupted;
  if (growth_rule) {
    // Stein's second stage: the first trials' spread says how many would resolve the fail
    // thresholds (the defaults for the headline and peak VRAM apply here too).
    if (auto first = BaselineFromLegs(ctx, headline, bo)) {
      std::size_t want = BaselineTrialsToResolve(*first, static_cast<std::size_t>(max_trials));
      const std::size_t have = first->metrics.front().trials.size();
      if (want > have) {
        int more = static_cast<int>(want - have);
        fmt::print(stderr,
                   "vouch baseline: the {} trials' spread needs {} to resolve the fail "
                   "thresholds: {} more trial{} (--max-trials {})\n",
                   have, want, more, more == 1 ? "" : "s", max_trials);
        RunMoreMeasured(ctx, arm, more);
        trials += more;
        first_stage = static_cast<int>(have);
      }
    }
  }
  bo.record_path = (std::filesystem::path(ctx.dir) / "record.json").string();
  int rc = FinishRun(ctx);
  if (rc != kExitOk) {
    fmt::print(stderr, "vouch baseline: not written: the trials did not give a quotable number\n");
    return rc;
  }
  auto b = BaselineFromLegs(ctx, headline, bo);
  if (!b) return fmt::print(stderr, "vouch baseline: {}\n", b.error().message), kExitError;
  b->trials = trials;
  b->metric_sources = f.metric_specs;  // a gate reads its legs the same way (gate_hints.h)
  if (first_stage >= 2) b->first_stage_trials = first_stage;
  if (growth_rule) b->max_trials = std::max(max_trials, trials);
  headline = b->headline;
  const std::string headline_reason = b->headline_reason;
  b->noise_warnings = BaselineNoiseWarnings(*b, kGateDefaultLegs);
  for (const auto& bm : b->metrics)
    if (auto m = DetectModes(bm.trials); m.found)
      b->noise_warnings.push_back(fmt::format(
          "{}: the trials show {}: {}", bm.name, DescribeModes(m, bm.unit, "trials"),
          bm.fail_pct ? "a gate against this baseline refuses the metric unless --allow-modes"
                      : "a gate against this baseline warns (the metric is warn-only)"));
  // Host noise (issue 23 item 5): the headline against the traced trials' GPU time; and, when
  // the headline is too noisy, where a quieter figure is (issue 22 item 9).
  const auto host_noise = gputrace::AssessHostNoise(ToJson(ctx.record)["legs"], headline);
  const bool headline_noisy =
      std::any_of(b->noise_warnings.begin(), b->noise_warnings.end(),
                  [&](const std::string& w) { return w.rfind(headline + ":", 0) == 0; });
  if (host_noise && (host_noise->host_bound || headline_noisy))
    b->noise_warnings.push_back(gputrace::HostNoiseAdvice(host_noise));
  if (auto s = WriteBaseline(file, *b); !s)
    return fmt::print(stderr, "vouch baseline: {}\n", s.error().message), kExitError;
  claim->Keep();
  for (const auto& w : b->noise_warnings) fmt::print(stderr, "vouch baseline: warning: {}\n", w);
  // The record carries the baseline it gave, for the history store and the report.
  ctx.record.extra["baseline"] = nlohmann::json::parse(BaselineToJson(*b));
  ctx.record.extra["baseline_path"] = file;
  if (auto s = WriteRecord(ctx.dir, ctx.record); !s)
    return fmt::print(stderr, "vouch baseline: {}\n", s.error().message), kExitError;
  if (!StoreResult(f.store, "baseline", ctx.dir)) return kExitError;
  fmt::print("baseline written to {} ({} metrics, from {} valid trials)\nheadline: {} ({})\n", file,
             b->metrics.size(),
             std::count_if(ctx.record.legs.begin(), ctx.record.legs.end(),
                           [](const LegRecord& l) { return l.role == "measured" && l.valid; }),
             headline, headline_reason);
  return kExitOk;
}

}  // namespace vouch::cli
