// vouch gate: a run (or a record) against a baseline (vouch baseline: cmd_baseline.cc).
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

// Per metric of the record's valid measured legs: the median, unit, every leg's value and the
// configuration that produced it.
Result<std::map<std::string, CurrentMetric>> RunMetrics(const nlohmann::json& rec,
                                                        std::string_view where) {
  auto medians = RecordMedians(rec, "run", where);
  if (!medians) return medians.error();
  std::map<std::string, CurrentMetric> now;
  for (const auto& [name, v] : *medians) now[name] = CurrentMetric{v.first, v.second, {}, {}};
  for (const auto& l : rec["legs"]) {
    if (l.value("arm", "") != "run" || l.value("role", "") != "measured" ||
        !l.value("valid", false))
      continue;
    auto ms = l.find("metrics");
    if (ms == l.end() || !ms->is_array()) continue;
    for (const auto& m : *ms) {
      if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) continue;
      auto it = now.find(m.value("name", ""));
      if (it == now.end()) continue;
      it->second.values.push_back(m["value"].get<double>());
      if (auto sm = m.find("samples");
          it->second.values.size() == 1 && sm != m.end() && sm->is_array())
        for (const auto& x : *sm)
          if (x.is_number() && std::isfinite(x.get<double>()))
            it->second.samples.push_back(x.get<double>());
      if (auto c = m.find("config"); c != m.end() && c->is_object() && it->second.config.empty())
        for (const auto& [k, v] : c->items())
          if (v.is_string()) it->second.config[k] = v.get<std::string>();
    }
  }
  return now;
}

// What vouch gate was asked, parsed.
struct GateFlags {
  RunFlags f;
  std::vector<std::string> cmd;  // after --: empty when a RECORD is gated
  std::string baseline_path, record_path, markdown, headline;
  int max_reps = 0;
  int look_every = 0;
  bool allow_modes = false;
  ThresholdPolicy thresholds;
  GateOptions gate_options;
};

constexpr const char* kGateAbout =
    "Compare a run (or a saved record) with a baseline: a table of metric, baseline, now, "
    "change, "
    "threshold, verdict.\nA metric fails only when the change is beyond its threshold by more "
    "than the noise (the baseline's trials against the run's legs) can explain; when the noise "
    "cannot tell, the gate is inconclusive.\nExit: 0 pass or warn, 1 a failing or missing "
    "metric (or no valid leg), 2 inconclusive (run more legs: --reps, or re-pin the baseline "
    "with more --trials), 3 refused: a metric's legs or trials form two modes (--allow-modes)";

// Adds the gate's options to APP and parses OPTS into FL: -1 when the gate goes on, else the
// exit code (help, a usage error). APP outlives FL's use: flags keep pointers to its options.
int ParseGateFlags(CLI::App& app, const std::vector<std::string>& opts, GateFlags* fl) {
  app.add_option("--baseline", fl->baseline_path, "baseline file (from vouch baseline)")
      ->required();
  app.add_option("--headline", fl->headline,
                 "the headline metric (default: the baseline's); it takes the baseline "
                 "headline's fail threshold when it has none. The legs are read with the "
                 "baseline's --metric sources unless --metric is given");
  app.add_option("RECORD", fl->record_path, "a record to gate instead of running a command");
  app.add_option("--markdown", fl->markdown,
                 "also write the table as Markdown for a pull request (at most 65,536 characters: "
                 "the rows that matter first; every row in FILE.full.md when they do not all fit); "
                 "- prints every row to stdout instead of the text");
  app.add_option("--max-reps", fl->max_reps,
                 "sequential gate: while a metric that can fail is inconclusive, run --reps more "
                 "legs at a time, at most N legs in all; the false-fail rate stays at most 5 % "
                 "(repeated confidence intervals; 0: off)")
      ->check(NumberFlag(Count(0, 100000)));
  app.add_option("--look-every", fl->look_every,
                 "sequential gate: after the first look at --reps legs, look again every N legs "
                 "(default: --reps). With a baseline of 8 trials, --reps 4 --look-every 3 "
                 "--max-reps 15 leaves unchanged code at 2 % noise and a 3 % threshold "
                 "inconclusive 8.0 % of the time, in 15.9 runs in all")
      ->check(NumberFlag(Count(1, 100000)));
  std::vector<std::string> threshold_specs;
  app.add_flag("--allow-modes", fl->allow_modes,
               "gate a metric whose legs (or baseline trials) form two modes anyway: by default "
               "the gate refuses it (exit 3)");
  AddThresholdFlags(app, &threshold_specs, &fl->thresholds.fail_pct_all);
  app.add_option("--fail-count", fl->gate_options.fail_count,
                 "a count metric (vllm's failed requests, errors, preemptions) fails when it grows "
                 "by more than N. A count pinned at 0 has no percentage change: 0 -> 0 passes, "
                 "any increase warns, and one of more than N fails")
      ->check(CLI::Range(0.0, 1e15));
  fl->f.Add(app, true);
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto overrides = ParseThresholdSpecs(threshold_specs);
  if (!overrides)
    return fmt::print(stderr, "vouch gate: {}\n", overrides.error().message), kExitUsage;
  fl->thresholds.overrides = *overrides;
  if (fl->record_path.empty() == fl->cmd.empty()) {
    fmt::print(stderr, "vouch gate: give either a RECORD or a command after --\n");
    return kExitUsage;
  }
  return -1;
}

// Reads the baseline into BASE with the gate's thresholds and headline applied; a command's
// legs are to be read as the baseline's trials were (the baseline records its sources). -1
// when the gate goes on, else the exit code.
int LoadGateBaseline(GateFlags* fl, Baseline* base) {
  auto read = ReadBaseline(fl->baseline_path);
  if (!read) return fmt::print(stderr, "vouch gate: {}\n", read.error().message), kExitError;
  *base = std::move(*read);
  if (auto s = ApplyThresholdPolicy(base, fl->thresholds); !s)
    return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitUsage;
  if (auto s = UseHeadline(base, fl->headline); !s)
    return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitUsage;
  if (!fl->cmd.empty() && fl->f.metric_specs.empty() && !base->metric_sources.empty()) {
    fl->f.metric_specs = base->metric_sources;
    fmt::print(stderr, "vouch gate: reading the legs' metrics as the baseline did: --metric {}\n",
               fmt::join(base->metric_sources, " --metric "));
  }
  return -1;
}

// A RECORD to gate: its JSON, and the design its live gate ran (verdict::GateRecordDesign). -1 when
// the gate goes on, else the exit code.
int ReadGatedRecord(const std::string& path, nlohmann::json* rec,
                    verdict::GateRecordDesign* design) {
  auto r = ReadRecordJson(path);
  if (!r) return fmt::print(stderr, "vouch gate: {}\n", r.error().message), kExitError;
  *rec = *r;
  if (rec->value("valid_legs", 0) == 0) {
    fmt::print(stderr, "vouch gate: {} has no valid measured leg: nothing to gate\n", path);
    return kExitError;
  }
  std::size_t measured = 0;
  if (rec->contains("legs") && (*rec)["legs"].is_array())
    for (const auto& l : (*rec)["legs"])
      if (l.is_object() && l.value("role", "") == "measured") ++measured;
  auto seq = verdict::GateSequentialDesignOfRecord(*rec, path);
  if (!seq) return fmt::print(stderr, "vouch gate: {}\n", seq.error().message), kExitError;
  *design = seq->value_or(verdict::GateRecordDesign{measured, 0, 0, 0, std::nullopt});
  design->legs = measured;
  return -1;
}

// The gate's design (gate/gate_sequential.h) and the measured legs run so far in it.
struct GateDesignState {
  std::optional<GateSequentialDesign> design;
  std::size_t legs_run = 0;

  // Where the legs run so far stand in the design (nullopt: no design).
  std::optional<GateLook> Look() const {
    if (!design) return std::nullopt;
    std::size_t k = std::max<std::size_t>(1, GateLookAt(*design, legs_run));
    return GateLook{k,
                    design->look_legs.size(),
                    legs_run,
                    design->plan.max_legs,
                    design->nominal_alpha[k - 1],
                    design->plan.alpha,
                    design->plan.first_legs,
                    design->plan.legs_per_look};
  }
  void CountLegs(const RunContext& ctx) {
    legs_run = static_cast<std::size_t>(
        std::count_if(ctx.record.legs.begin(), ctx.record.legs.end(),
                      [](const LegRecord& l) { return l.role == "measured"; }));
  }
};

// Sequential with --max-reps, or one look calibrated on the baseline's growth rule when it
// could grow; DESIGN_REPS legs planned.
GateDesignState PlanGateDesign(const Baseline& base, std::size_t design_reps, int max_reps,
                               int look_every) {
  GateDesignState st;
  bool unusable = false;
  st.design = GateDesignFor(base, design_reps, static_cast<std::size_t>(max_reps),
                            static_cast<std::size_t>(look_every),
                            GateAlphaPerMetric(base, ProcessEnv()), &unusable);
  if (unusable)
    fmt::print(stderr,
               "vouch gate: --max-reps {} not used: a sequential gate needs --reps 2 or more and "
               "a baseline with 2 or more trials of a metric that can fail\n",
               max_reps);
  return st;
}

// While the design's look at the legs so far is inconclusive, a block of legs more.
void RunGateSequentialLooks(const GateFlags& fl, const Baseline& base, const Arm& arm,
                            GateDesignState* st, RunContext* ctx) {
  const auto& design = st->design;
  while (design && !ctx->interrupted && st->legs_run < design->plan.max_legs) {
    auto m = RunMetrics(ToJson(ctx->record), "this run");
    if (!m) break;
    GateReport look = CompareToBaseline(base, *m, RecordClockState(ToJson(ctx->record), "run"),
                                        ProcessEnv(), st->Look(), fl.gate_options);
    if (!GateUndecided(look)) break;
    const int block = static_cast<int>(
        std::min(design->plan.legs_per_look, design->plan.max_legs - st->legs_run));
    fmt::print(stderr,
               "vouch gate: look {} of {} at {} legs is inconclusive: {} more leg{} "
               "(--max-reps {})\n",
               look.sequential->look, look.sequential->looks, st->legs_run, block,
               block == 1 ? "" : "s", fl.max_reps);
    const bool go = RunMoreMeasured(*ctx, arm, block);
    st->CountLegs(*ctx);
    if (!go) break;
  }
}

// A pass over modes the test could not check is no pass: the legs the check needs first.
void RunGateLegsForModes(const GateFlags& fl, const Baseline& base, const Arm& arm,
                         GateDesignState* st, RunContext* ctx) {
  if (ctx->interrupted) return;
  auto m = RunMetrics(ToJson(ctx->record), "this run");
  if (!m) return;
  GateReport look = CompareToBaseline(base, *m, RecordClockState(ToJson(ctx->record), "run"),
                                      ProcessEnv(), st->Look(), fl.gate_options);
  std::string note;
  const std::size_t more = verdict::GateLegsForModes(look, base, *m, &note);
  if (more > 0 && GateExitCode(look) == 0) {
    fmt::print(stderr, "vouch gate: {} before it can pass\n", TerminalSafe(note));
    RunMoreMeasured(*ctx, arm, static_cast<int>(more));
    st->CountLegs(*ctx);
  }
}

// Runs the command's legs (and the sequential looks' more) into CTX; REC is its record. -1
// when the gate goes on, else the exit code.
int RunGateLegs(const GlobalOptions& g, const GateFlags& fl, const std::vector<std::string>& args,
                const Baseline& base, GateDesignState* st, RunContext* ctx, nlohmann::json* rec) {
  auto env = ParseEnv(fl.f.env);
  if (!env) return fmt::print(stderr, "vouch gate: {}\n", env.error().message), kExitUsage;
  Arm arm{"run", fl.cmd, *env, fl.f.cwd, fl.f.shell};
  std::vector<std::string> argv = {"gate"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (int rc = PrepareRun(g, fl.f, {arm}, "gate", argv, ctx); rc >= 0) return rc;
  // A leg without the baseline's headline: said at the first leg (gate_hints.h).
  ctx->first_leg_check = [&base](const LegRecord& l) {
    std::string why = HeadlineProblem(l.metrics, base.headline);
    return why.empty() ? why
                       : why +
                             "; the baseline's headline must be read from every leg (give "
                             "the --metric sources that report it)";
  };
  RunWarmupAndMeasured(*ctx, arm, fl.f.warmup, fl.f.reps);
  st->CountLegs(*ctx);
  RunGateSequentialLooks(fl, base, arm, st, ctx);
  RunGateLegsForModes(fl, base, arm, st, ctx);
  int rc = FinishRun(*ctx, false);
  if (rc != kExitOk) return rc;
  *rec = ToJson(ctx->record);
  return -1;
}

// The modes found: warnings, notes (not with --json) and what refuses the gate.
void PrintGateModes(const verdict::GateFinal& fin, const GateFlags& fl) {
  // Metric names are the leg's: escaped for the terminal (util/escape.h).
  for (const auto& m : fin.modes.warn)
    fmt::print(stderr, "vouch gate: warning: {} (warn-only: the gate goes on)\n", TerminalSafe(m));
  if (!fl.f.json)
    for (const auto& m : fin.modes.unchecked)
      fmt::print(stderr, "vouch gate: note: {}\n", TerminalSafe(m));
  for (const auto& m : fin.modes.refuse)
    fmt::print(stderr, "vouch gate: {}{}\n", fl.allow_modes ? "warning: " : "", TerminalSafe(m));
}

// A gate refused over modes: said, and kept in the record when the gate ran the legs.
int KeepGateRefusal(const verdict::GateFinal& fin, const GateFlags& fl, RunContext* ctx) {
  fmt::print(stderr, "vouch gate: {}\n", verdict::GateModesRefusal());
  if (fl.record_path.empty()) {
    ctx->record.extra["gate_refused"] = {{"modes", fin.modes.refuse}};
    ctx->record.extra["gate"] = fin.json;
    if (auto s = WriteRecord(ctx->dir, ctx->record); !s)
      return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitError;
  }
  return fin.exit_code;
}

// The table on stdout (JSON, Markdown with --markdown -, else text), and the host-noise advice.
void PrintGateTable(const verdict::GateFinal& fin, const GateFlags& fl) {
  if (fl.f.json)
    fmt::print("{}\n", RenderGateJson(fin.report));
  else if (fl.markdown == "-")
    fmt::print("{}", RenderGateMarkdown(fin.report, std::string::npos));
  else
    fmt::print("{}", RenderGateText(fin.report));
  if (fin.host_noise)
    fmt::print(stderr, "vouch gate: {}\n", gputrace::HostNoiseAdvice(fin.host_noise));
}

// --markdown FILE: a comment GitHub accepts; when every row does not fit, all of them go beside
// it in FILE.full.md, which the comment names. -1 when written (or not asked), else the exit code.
int WriteGateMarkdown(const std::string& markdown, const GateReport& report) {
  if (markdown.empty() || markdown == "-") return -1;
  std::string full = RenderGateMarkdown(report, std::string::npos);
  std::string full_path;
  if (full.size() > kPullRequestCommentChars) {
    full_path = std::filesystem::path(markdown).replace_extension(".full.md").string();
    if (auto s = WriteFileAtomic(full_path, full); !s)
      return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitError;
    fmt::print(stderr,
               "vouch gate: the Markdown table ({} characters) is over GitHub's {} for a "
               "comment: {} holds the rows that matter first, {} every row\n",
               full.size(), kPullRequestCommentChars, markdown, full_path);
  }
  if (auto s = WriteFileAtomic(markdown,
                               RenderGateMarkdown(report, kPullRequestCommentChars, full_path));
      !s)
    return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitError;
  return -1;
}

// The gate table goes with its record: into record.json when the gate ran the legs, and into
// the history store with --store. -1 when kept, else the exit code.
int KeepGateResult(const GateFlags& fl, const nlohmann::json& gate_json, RunContext* ctx) {
  if (fl.record_path.empty()) {
    ctx->record.extra["gate"] = gate_json;
    ctx->record.extra["baseline_path"] = fl.baseline_path;
    if (auto s = WriteRecord(ctx->dir, ctx->record); !s)
      return fmt::print(stderr, "vouch gate: {}\n", s.error().message), kExitError;
    if (!StoreResult(fl.f.store, "gate", ctx->dir)) return kExitError;
  } else if (!StoreResult(fl.f.store, "gate", fl.record_path, &gate_json, fl.baseline_path)) {
    return kExitError;
  }
  return -1;
}

// The verdict of the record REC against BASE (its rules: src/verdict/gate.h, the same for a
// live gate and a RECORD), said and kept. The gate's exit code.
int DecideAndReportGate(const GateFlags& fl, const Baseline& base, const GateDesignState& st,
                        const nlohmann::json& rec, RunContext* ctx) {
  auto run_metrics = RunMetrics(rec, fl.record_path.empty() ? "this run" : fl.record_path);
  if (!run_metrics)
    return fmt::print(stderr, "vouch gate: {}\n", run_metrics.error().message), kExitError;
  std::map<std::string, CurrentMetric> now = std::move(*run_metrics);
  ClockState clock = RecordClockState(rec, "run");
  verdict::GateFinal fin = verdict::DecideGate(base, now, clock, ProcessEnv(), st.Look(),
                                               rec.value("legs", nlohmann::json::array()),
                                               {fl.allow_modes, fl.gate_options});
  PrintGateModes(fin, fl);
  if (fin.refused) return KeepGateRefusal(fin, fl, ctx);
  PrintGateTable(fin, fl);
  if (int rc = WriteGateMarkdown(fl.markdown, fin.report); rc >= 0) return rc;
  if (int rc = KeepGateResult(fl, fin.json, ctx); rc >= 0) return rc;
  return fin.exit_code;
}

}  // namespace

int CmdGate(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{kGateAbout, "gate"};
  GateFlags fl;
  fl.cmd = cmd;
  if (int rc = ParseGateFlags(app, opts, &fl); rc >= 0) return rc;
  Baseline base;
  if (int rc = LoadGateBaseline(&fl, &base); rc >= 0) return rc;
  if (fl.max_reps > 0 && !fl.record_path.empty()) {
    fmt::print(stderr,
               "vouch gate: --max-reps runs more legs: give a command after --, not a "
               "RECORD\n");
    return kExitUsage;
  }
  if (fl.look_every > 0 && fl.max_reps == 0) {
    fmt::print(stderr,
               "vouch gate: --look-every sets a sequential gate's looks: give --max-reps\n");
    return kExitUsage;
  }
  nlohmann::json rec;
  verdict::GateRecordDesign design{static_cast<std::size_t>(fl.f.reps),
                                   static_cast<std::size_t>(fl.max_reps),
                                   static_cast<std::size_t>(fl.look_every), 0, std::nullopt};
  if (!fl.record_path.empty())
    if (int rc = ReadGatedRecord(fl.record_path, &rec, &design); rc >= 0) return rc;
  GateDesignState st = PlanGateDesign(base, design.reps, static_cast<int>(design.max_reps),
                                      static_cast<int>(design.look_every));
  st.legs_run = design.legs;  // a RECORD's: its measured legs; a live gate counts its own
  if (auto look = st.Look(); look && !fl.record_path.empty())
    if (auto same = verdict::CheckRecordedLevel(design, look->nominal_alpha, fl.record_path); !same)
      return fmt::print(stderr, "vouch gate: {}\n", same.error().message), kExitError;
  RunContext ctx;
  if (fl.record_path.empty())
    if (int rc = RunGateLegs(g, fl, args, base, &st, &ctx, &rec); rc >= 0) return rc;
  return DecideAndReportGate(fl, base, st, rec, &ctx);
}

}  // namespace vouch::cli
