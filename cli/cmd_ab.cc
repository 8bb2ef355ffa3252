// vouch ab: is B faster than A? Two arms (two commands, or one command with two
// environments), one discarded warm-up leg per arm, ABBA blocks in a seeded random
// orientation, one window per leg, the pairing rules for every pair, and a verdict from
// the paired statistics (src/stats) against a noise band. The protocol and its reports are
// in src/ab/protocol.h; this file parses the flags, builds and checks the arms, runs the
// legs into the record and maps the verdict to an exit code.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>

#include "ab/arms.h"
#include "ab/command_files.h"
#include "ab/protocol.h"
#include "ab_partial.h"
#include "ab_verdict.h"
#include "gputrace/compare.h"
#include "number_flag.h"
#include "run_common.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/shell_words.h"
#include "verdict/ab_record.h"

namespace vouch::cli {

namespace {

void AbSay(const std::string& m) { fmt::print(stderr, "vouch ab: {}\n", m); }

// The text of the arms as the flags give them.
struct AbArmFlags {
  std::string a_cmd, b_cmd, a_name = "A", b_name = "B";
  std::vector<std::string> a_env, b_env, controls, sources;
};

// Step 1: the two arms from the flags (commands, environments, names). An exit code when the
// flags do not make two arms.
std::optional<int> BuildArms(const RunFlags& f, const AbArmFlags& x,
                             const std::vector<std::string>& cmd, Arm& a, Arm& b) {
  a.name = x.a_name;
  b.name = x.b_name;
  auto common_env = ParseEnv(f.env);
  auto ae = ParseEnv(x.a_env);
  auto be = ParseEnv(x.b_env);
  if (!common_env || !ae || !be)
    return AbSay((!common_env ? common_env : !ae ? ae : be).error().message), kExitUsage;
  if (!cmd.empty()) {
    if (!x.a_cmd.empty() || !x.b_cmd.empty())
      return AbSay("give either --a/--b or one command after --, not both"), kExitUsage;
    a.argv = b.argv = cmd;
  } else if (f.shell) {
    // /bin/sh -c gets each string as it was written.
    if (!x.a_cmd.empty()) a.argv = {x.a_cmd};
    if (!x.b_cmd.empty()) b.argv = {x.b_cmd};
  } else {
    auto wa = SplitShellWords(x.a_cmd), wb = SplitShellWords(x.b_cmd);
    if (!wa || !wb)
      return AbSay(fmt::format("--{}: {}", !wa ? "a" : "b", (!wa ? wa : wb).error().message)),
             kExitUsage;
    a.argv = *wa;
    b.argv = *wb;
  }
  if (a.argv.empty() || b.argv.empty())
    return AbSay("no command: give --a and --b, or -- CMD with --a-env/--b-env"), kExitUsage;
  if (x.a_name == x.b_name) return AbSay("the two arms need different names"), kExitUsage;
  a.env = *common_env;
  b.env = *common_env;
  a.env.insert(a.env.end(), ae->begin(), ae->end());
  b.env.insert(b.env.end(), be->begin(), be->end());
  a.cwd = b.cwd = f.cwd;
  a.shell = b.shell = f.shell;
  return std::nullopt;
}

// Step 2: two arms must be two arms: the artifacts and controls given (vouch arms), else the
// arms' own files, hashed. An exit code when they are not shown to be two.
std::optional<int> CheckTwoArms(const RunFlags& f, const AbArmFlags& x, const Arm& a, const Arm& b,
                                ArmInput& arms_a, ArmInput& arms_b, nlohmann::json& arms_json,
                                nlohmann::json& arms_files_json) {
  const auto& controls = x.controls;
  const auto& sources = x.sources;
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
    if (!rep) return AbSay(rep.error().message), kExitError;
    arms_json = nlohmann::json::parse(RenderArmsJson(*rep));
    // With --gpu-trace the kernel multiset is a behavioural control measured by the legs
    // themselves: "no control (yet)" does not stop them; a fatal finding (one artifact) does.
    bool gpu_control = f.gpu_trace || !f.gpu_trace_lib.empty();
    bool blocked = std::any_of(rep->findings.begin(), rep->findings.end(), [&](const auto& y) {
      bool refuse = y.severity == ArmsSeverity::kFatal || y.severity == ArmsSeverity::kRefuse;
      return refuse && !(gpu_control && (y.code == "hash_only" || y.code == "no_control_moved"));
    });
    if (blocked) {
      fmt::print("{}", RenderArmsText(*rep));
      AbSay("refused: the two arms are not shown to be two arms (see above); no leg was run");
      return kAbRefused;
    }
  }
  // Without --artifact-a/-b, the arms' own files (executable, interpreter script), hashed.
  if (arms_a.artifacts.empty() && arms_b.artifacts.empty() &&
      !(a.argv == b.argv && a.env == b.env)) {
    auto files = CheckCommandArms(a, b);
    if (!files) return AbSay(files.error().message), kExitError;
    for (const auto& y : files->findings)
      AbSay(fmt::format(
          "arms: {}{}",
          y.severity == ArmsSeverity::kInfo ? "" : std::string(ArmsSeverityName(y.severity)) + ": ",
          y.message));
    arms_files_json = nlohmann::json::parse(RenderCommandArmsJson(*files));
    if (files->fatal) {
      AbSay("refused: the two arms are one artifact (see above); no leg was run");
      return kAbRefused;
    }
  }
  return std::nullopt;
}

// What vouch ab was asked, parsed.
struct AbFlags {
  RunFlags f;
  AbArmFlags arm;
  std::string headline, fail_on, markdown, from;
  int pairs = 8, calibrate = 0;
  std::optional<int> max_pairs;
  std::optional<std::uint64_t> seed;
  double band_pct = 1.0, confidence = 0.95;
  bool cross_boot = false, not_on_gpu = false, segment = false, allow_modes = false;
  ArmInput arms_a, arms_b;
  std::vector<std::string> given;  // the options given, by name (--from refuses most)
};

// The arms' commands, environments and names.
void AddAbArmOptions(CLI::App& app, AbFlags* fl) {
  AbArmFlags& x = fl->arm;
  app.add_option(
      "--a", x.a_cmd,
      "arm A's command, split into words as sh does (quotes, \\ escapes, $VAR, globs; never "
      "$(...)); run through /bin/sh -c as written with --shell");
  app.add_option("--b", x.b_cmd, "arm B's command");
  app.add_option("--a-env", x.a_env, "K=V for arm A (with one command after --)");
  app.add_option("--b-env", x.b_env, "K=V for arm B");
  app.add_option("--a-name", x.a_name, "arm A's name (A)");
  app.add_option("--b-name", x.b_name, "arm B's name (B)");
}

// The design (pairs, seed, band) and the verdict (headline, modes, --fail-on, Markdown).
void AddAbDesignOptions(CLI::App& app, AbFlags* fl) {
  app.add_option("--headline", fl->headline,
                 "the metric the verdict is about (default: the only user metric)");
  app.add_option("--from", fl->from,
                 "recompute the verdict from RECORD's legs (an earlier vouch ab), e.g. about "
                 "another metric with --headline; runs no leg and leaves the record as it is");
  app.add_option("--pairs", fl->pairs,
                 "pairs to run (fixed design; rounded up to whole ABBA blocks) (8)")
      // 2 is a fleet node's share (--segment): refused below, so not in the help's range.
      ->check(NumberFlag(Count(2, 10000))
                  .description(fmt::format("INT in [{} - 10000]", kDefaultMinPairs)));
  app.add_option("--max-pairs", fl->max_pairs,
                 "sequential mode: decide after each block, at most this many pairs")
      ->check(NumberFlag(Count(4, 1000)));
  // Any 64-bit seed (vouch draws them so, and a fleet hands them on): CLI11's own integer
  // conversion checks it; a double-valued range cannot hold 2^64 - 1.
  app.add_option("--seed", fl->seed, "seed of the block orientations (default: random, recorded)")
      ->check(Seed64());
  app.add_option("--calibrate", fl->calibrate,
                 "run K A/A pairs first; the band is the 95th percentile of their |d|")
      ->check(NumberFlag(Count(0, 1000)));
  app.add_option("--band", fl->band_pct, "noise band in percent when not calibrated (1)")
      ->check(NumberFlag({0, 100, true}));
  app.add_option("--confidence", fl->confidence, "confidence of the interval (0.95)")
      ->check(NumberFlag({0, 1, true, true}));
  app.add_flag("--allow-cross-boot", fl->cross_boot,
               "pair legs across boots (waives the boot id only; a caveat)");
  app.add_flag("--allow-modes", fl->allow_modes,
               "give a verdict over the medians even when an arm's legs form two modes (by "
               "default refused, unless every leg of B is beyond every leg of A: then an exact "
               "rank test decides the direction)");
  app.add_option("--fail-on", fl->fail_on, "'slower': exit 5 when the verdict is B slower (for CI)")
      ->check(CLI::IsMember({"slower"}));
  AddMarkdownOption(app, fl->markdown, "the verdict");
}

// What shows the two arms are two (vouch arms): artifacts, roots, controls.
void AddAbArmsCheckOptions(CLI::App& app, AbFlags* fl) {
  app.add_option("--artifact-a", fl->arms_a.artifacts, "arm A's artifact to hash (vouch arms)");
  app.add_option("--artifact-b", fl->arms_b.artifacts, "arm B's artifact");
  app.add_option("--root-a", fl->arms_a.roots, "arm A's build/source root");
  app.add_option("--root-b", fl->arms_b.roots, "arm B's build/source root");
  app.add_option("--control", fl->arm.controls, "NAME A B: a behavioural control")->expected(3);
  app.add_option("--source", fl->arm.sources, "NAME PATH_A PATH_B: a source control")->expected(3);
  app.add_flag("--change-not-on-gpu", fl->not_on_gpu,
               "with --gpu-trace: the change is not on the GPU (host code, I/O), so arms that ran "
               "identical kernels may still get a faster/slower verdict");
}

constexpr const char* kAbAbout =
    "Is B faster than A? Paired, counterbalanced A/B legs with clock windows and a verdict.\n"
    "Two commands: --a 'CMD ARGS' --b 'CMD ARGS'; one command, two environments (preferred): "
    "--a-env K=V --b-env K=V -- CMD ARGS.\n"
    "Exit: 0 decided (B faster, B slower, no change), 2 inconclusive, 3 refused, 5 B slower with "
    "--fail-on slower, 1 error";

// Adds ab's options to APP and parses OPTS into FL: -1 when ab goes on, else the exit code
// (help, a usage error). APP outlives FL's use: flags keep pointers to its options.
int ParseAbFlags(CLI::App& app, const std::vector<std::string>& opts, AbFlags* fl) {
  AddAbArmOptions(app, fl);
  AddAbDesignOptions(app, fl);
  AddAbArmsCheckOptions(app, fl);
  // One fleet node's share (vouch fleet ab): whole blocks, the verdict is the fleet's, so one
  // block (2 pairs) is allowed. Not in --help: the fleet worker gives it.
  app.add_flag("--segment", fl->segment, "")->group("");
  fl->f.Add(app, false);
  fl->f.warmup = 1;
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0) fl->given.push_back(o->get_name());
  return -1;
}

// --from RECORD: the verdict recomputed from an earlier vouch ab's legs, under the record's own
// plan (its band, confidence, pairs, policy): a flag that would change it is refused, never
// silently dropped.
int ReplayAbRecord(const AbFlags& fl, const std::vector<std::string>& cmd) {
  if (!cmd.empty() || !fl.arm.a_cmd.empty() || !fl.arm.b_cmd.empty())
    return AbSay("--from RECORD replays a record's legs: give no command"), kExitUsage;
  const std::vector<std::string> honoured = {"--from", "--headline", "--json", "--markdown",
                                             "--fail-on"};
  for (const std::string& name : fl.given)
    if (std::find(honoured.begin(), honoured.end(), name) == honoured.end())
      return AbSay(fmt::format("{} cannot apply to --from RECORD: the verdict is recomputed with "
                               "the record's own plan (give only --headline, --json, --markdown, "
                               "--fail-on; run a new vouch ab to change the plan)",
                               name)),
             kExitUsage;
  return AbFromRecord(fl.from, fl.headline, fl.f.json, fl.markdown, fl.fail_on);
}

// The protocol's plan (src/ab/protocol.h) from the flags; a seed drawn when none was given.
// An exit code when the band is no percentage.
std::optional<int> MakeAbPlan(const AbFlags& fl, const Arm& a, const Arm& b, AbPlan* plan) {
  plan->a = a;
  plan->b = b;
  plan->warmup = fl.f.warmup;
  plan->pairs = fl.pairs;
  plan->max_pairs = fl.max_pairs;
  plan->calibrate = fl.calibrate;
  if (fl.calibrate == 0) {
    auto nb = NoiseBandFromPercent(fl.band_pct);
    if (!nb)
      return AbSay(fmt::format("--band {}: must be a positive percentage", fl.band_pct)),
             kExitUsage;
    plan->band = *nb;
  }
  plan->confidence = fl.confidence;
  plan->allow_cross_boot = fl.cross_boot;
  plan->headline = fl.headline;
  plan->seed = fl.seed ? *fl.seed : std::random_device{}();
  return std::nullopt;
}

// The run folder and the record's start: the plan (with the seed, so that the argv replays
// it), the arms' checks. -1 when ab goes on, else the exit code.
int PrepareAbRun(const GlobalOptions& g, const AbFlags& fl, const std::vector<std::string>& args,
                 const verdict::AbRules& rules, const nlohmann::json& arms_json,
                 const nlohmann::json& arms_files_json, AbPlan* plan, RunContext* ctx) {
  std::vector<std::string> argv = {"ab"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!fl.seed) argv.insert(argv.begin() + 1, {"--seed", std::to_string(plan->seed)});
  if (int rc = PrepareRun(g, fl.f, {plan->a, plan->b}, "ab", argv, ctx); rc >= 0) return rc;
  plan->policy = ctx->record.policy;
  ctx->record.planned_legs = AbPlannedLegs(*plan);
  ctx->planned_is_max = plan->max_pairs.has_value();  // a sequential look may stop it early
  ctx->record.extra["seed"] = plan->seed;
  ctx->record.extra["arms_check"] = arms_json;
  ctx->record.extra["arms_files"] = arms_files_json;
  ctx->record.extra["ab_plan"] = verdict::AbPlanJson(*plan, rules, fl.arm.a_env, fl.arm.b_env);
  return -1;
}

// The protocol run: the legs run here, into the record; the protocol sees each one as it was
// recorded.
AbOutcome RunAbLegs(const AbPlan& plan, RunContext* ctx) {
  LegRunner run_leg = [ctx](const Arm& arm, const std::string& role) {
    size_t before = ctx->record.legs.size();
    bool go = RunOneLeg(*ctx, arm, role);
    LegStep step;
    if (ctx->record.legs.size() > before) step.leg = &ctx->record.legs.back();
    step.stop = !go;
    return step;
  };
  LookObserver on_look = [](size_t look, size_t done_pairs,
                            const std::optional<SequentialStep>& step) {
    fmt::print(stderr, "{}", RenderLookLine(look, done_pairs, step));
  };
  // The finished blocks' pairs go into the record after every block: a run killed mid-way
  // (a fleet node lost) still says which pairs it had.
  BlockObserver on_block = [&plan, ctx](const AbOutcome& so_far) {
    ctx->record.extra["blocks_so_far"] = AbPairsJson(so_far);
    ctx->record.extra["blocks_so_far"]["band_log"] =
        plan.calibrate > 0 ? nlohmann::json() : nlohmann::json(plan.band.half_width_log);
    (void)WriteRecord(ctx->dir, ctx->record);
  };
  return RunAbProtocol(plan, run_leg, on_look, on_block);
}

// A protocol that ended without pairs to judge (calibration or design failed, the headline
// refused at the first leg): said and recorded. The exit code, or nullopt when pairs ran.
std::optional<int> EndAbWithoutPairs(const AbOutcome& out, RunContext* ctx) {
  if (out.end == AbOutcome::End::kCalibrationFailed) {
    AbSay(out.error);
    ctx->record.status = "failed";
    (void)FinishRun(*ctx, false);
    return kAbRefused;
  }
  if (out.end == AbOutcome::End::kDesignFailed) return AbSay(out.error), kExitError;
  if (out.end == AbOutcome::End::kHeadlineRefused) {
    // Known from the first leg: every pair would have been refused for its headline.
    const int ran = static_cast<int>(ctx->record.legs.size());
    ctx->record.extra["refused"] =
        fmt::format("{}; {} of {} planned legs were not run", out.error,
                    ctx->record.planned_legs - ran, ctx->record.planned_legs);
    AbSay(fmt::format("refused: {}; the other {} planned legs were not run", out.error,
                      ctx->record.planned_legs - ran));
    ctx->record.status = "failed";
    (void)FinishRun(*ctx, false);
    return kAbRefused;
  }
  return std::nullopt;
}

// A sequential look decided before the last block: the legs not run were never needed.
void NoteAbStoppedEarly(const AbOutcome& out, RunContext* ctx) {
  if (!(out.completed() && out.last_step && out.last_step->stop)) return;
  int run = static_cast<int>(ctx->record.legs.size());
  ctx->record.extra["stopped_early"] = fmt::format(
      "the sequential design decided at look {} after {} pairs; {} of {} planned legs were not "
      "needed",
      out.looks, out.pairs.size(), ctx->record.planned_legs - run, ctx->record.planned_legs);
  ctx->record.planned_legs = run;
}

// The verdict block on stdout (text, JSON or Markdown), the store, and the exit code.
int ReportAbVerdict(const AbFlags& fl, const AbPlan& plan, const AbOutcome& out,
                    const verdict::AbFinal& fin, const RunContext& ctx) {
  AbReportContext report;
  report.simulated = ctx.device && ctx.device->Simulated();
  report.caveats = ctx.record.caveats;
  report.a_env = fl.arm.a_env;
  report.b_env = fl.arm.b_env;
  if (!PrintAbVerdict(plan, out, fin, report, fl.f.json, fl.markdown)) return kExitError;
  if (!StoreResult(fl.f.store, "ab", ctx.dir)) return kExitError;
  return AbExitCode(out.decision.verdict, fl.fail_on == "slower");
}

}  // namespace

int CmdAb(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{kAbAbout, "ab"};
  AbFlags fl;
  if (int rc = ParseAbFlags(app, opts, &fl); rc >= 0) return rc;
  if (!fl.from.empty()) return ReplayAbRecord(fl, cmd);
  if (!fl.segment && fl.pairs < static_cast<int>(kDefaultMinPairs))
    return AbSay(fmt::format("--pairs {}: a verdict needs at least {} pairs (two ABBA blocks)",
                             fl.pairs, kDefaultMinPairs)),
           kExitUsage;

  // Steps 1 and 2: the arms, and that they are two.
  Arm a, b;
  if (auto rc = BuildArms(fl.f, fl.arm, cmd, a, b)) return *rc;
  nlohmann::json arms_json, arms_files_json;
  if (auto rc = CheckTwoArms(fl.f, fl.arm, a, b, fl.arms_a, fl.arms_b, arms_json, arms_files_json))
    return *rc;
  if (a.argv == b.argv && a.env == b.env)
    return AbSay(
               "arms A and B are one arm: the same command with the same environment; an A/B "
               "of one arm measures nothing (use --calibrate for an A/A)"),
           kAbRefused;

  // Step 3: the plan, the legs and the verdict (its rules: src/verdict/ab.h, as --from).
  AbPlan plan;
  if (auto rc = MakeAbPlan(fl, a, b, &plan)) return *rc;
  const verdict::AbRules rules{fl.not_on_gpu, fl.allow_modes};
  RunContext ctx;
  if (int rc = PrepareAbRun(g, fl, args, rules, arms_json, arms_files_json, &plan, &ctx); rc >= 0)
    return rc;
  AbOutcome out = RunAbLegs(plan, &ctx);
  if (auto rc = EndAbWithoutPairs(out, &ctx)) return *rc;
  NoteAbStoppedEarly(out, &ctx);
  verdict::AbFinal fin = verdict::FinishAb(plan, out, rules, ctx.record.caveats);
  ctx.record.caveats = fin.caveats;
  if (auto check = ArmsCheckWithGpu(fin.gpu, fl.arms_a, fl.arms_b); !check.is_null())
    ctx.record.extra["arms_check_gpu"] = check;
  ctx.record.extra["verdict"] = fin.verdict;
  int rc = FinishRun(ctx, false);
  if (ctx.record.status == "interrupted")  // the pairs so far, in words (ab_partial.h)
    fmt::print(
        stderr, "{}",
        InterruptedAbSummary(out, static_cast<std::size_t>(plan.max_pairs.value_or(plan.pairs)),
                             a.name, b.name, ctx.dir + "/record.json"));
  if (ctx.record.status == "interrupted" || !ctx.stopped_on_failure.empty()) return rc;
  return ReportAbVerdict(fl, plan, out, fin, ctx);
}

}  // namespace vouch::cli
