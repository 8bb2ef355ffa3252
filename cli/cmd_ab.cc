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
  std::string a_cmd, b_cmd, a_name = "A", b_name = "B", headline, fail_on, markdown, from;
  std::vector<std::string> a_env, b_env;
  int pairs = 8, calibrate = 0;
  std::optional<int> max_pairs;
  std::optional<std::uint64_t> seed;
  double band_pct = 1.0, confidence = 0.95;
  bool cross_boot = false, not_on_gpu = false, segment = false, allow_modes = false;
  ArmInput arms_a, arms_b;
  std::vector<std::string> controls, sources;
  app.add_option(
      "--a", a_cmd,
      "arm A's command, split into words as sh does (quotes, \\ escapes, $VAR, globs; never "
      "$(...)); run through /bin/sh -c as written with --shell");
  app.add_option("--b", b_cmd, "arm B's command");
  app.add_option("--a-env", a_env, "K=V for arm A (with one command after --)");
  app.add_option("--b-env", b_env, "K=V for arm B");
  app.add_option("--a-name", a_name, "arm A's name (A)");
  app.add_option("--b-name", b_name, "arm B's name (B)");
  app.add_option("--headline", headline,
                 "the metric the verdict is about (default: the only user metric)");
  app.add_option("--from", from,
                 "recompute the verdict from RECORD's legs (an earlier vouch ab), e.g. about "
                 "another metric with --headline; runs no leg and leaves the record as it is");
  app.add_option("--pairs", pairs,
                 "pairs to run (fixed design; rounded up to whole ABBA blocks) (8)")
      // 2 is a fleet node's share (--segment): refused below, so not in the help's range.
      ->check(NumberFlag(Count(2, 10000))
                  .description(fmt::format("INT in [{} - 10000]", kDefaultMinPairs)));
  app.add_option("--max-pairs", max_pairs,
                 "sequential mode: decide after each block, at most this many pairs")
      ->check(NumberFlag(Count(4, 1000)));
  // Any 64-bit seed (vouch draws them so, and a fleet hands them on): CLI11's own integer
  // conversion checks it; a double-valued range cannot hold 2^64 - 1.
  app.add_option("--seed", seed, "seed of the block orientations (default: random, recorded)")
      ->check(Seed64());
  app.add_option("--calibrate", calibrate,
                 "run K A/A pairs first; the band is the 95th percentile of their |d|")
      ->check(NumberFlag(Count(0, 1000)));
  app.add_option("--band", band_pct, "noise band in percent when not calibrated (1)")
      ->check(NumberFlag({0, 100, true}));
  app.add_option("--confidence", confidence, "confidence of the interval (0.95)")
      ->check(NumberFlag({0, 1, true, true}));
  app.add_flag("--allow-cross-boot", cross_boot,
               "pair legs across boots (waives the boot id only; a caveat)");
  app.add_flag("--allow-modes", allow_modes,
               "give a verdict over the medians even when an arm's legs form two modes (by "
               "default refused, unless every leg of B is beyond every leg of A: then an exact "
               "rank test decides the direction)");
  app.add_option("--fail-on", fail_on, "'slower': exit 5 when the verdict is B slower (for CI)")
      ->check(CLI::IsMember({"slower"}));
  AddMarkdownOption(app, markdown, "the verdict");
  app.add_option("--artifact-a", arms_a.artifacts, "arm A's artifact to hash (vouch arms)");
  app.add_option("--artifact-b", arms_b.artifacts, "arm B's artifact");
  app.add_option("--root-a", arms_a.roots, "arm A's build/source root");
  app.add_option("--root-b", arms_b.roots, "arm B's build/source root");
  app.add_option("--control", controls, "NAME A B: a behavioural control")->expected(3);
  app.add_option("--source", sources, "NAME PATH_A PATH_B: a source control")->expected(3);
  app.add_flag("--change-not-on-gpu", not_on_gpu,
               "with --gpu-trace: the change is not on the GPU (host code, I/O), so arms that ran "
               "identical kernels may still get a faster/slower verdict");
  // One fleet node's share (vouch fleet ab): whole blocks, the verdict is the fleet's, so one
  // block (2 pairs) is allowed. Not in --help: the fleet worker gives it.
  app.add_flag("--segment", segment, "")->group("");
  f.Add(app, false);
  f.warmup = 1;
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch ab: {}\n", m); };
  if (!from.empty()) {
    if (!cmd.empty() || !a_cmd.empty() || !b_cmd.empty())
      return say("--from RECORD replays a record's legs: give no command"), kExitUsage;
    // The record's plan holds (its band, confidence, pairs, policy): a flag that would change
    // it is refused, never silently dropped.
    const std::vector<std::string> honoured = {"--from", "--headline", "--json", "--markdown",
                                               "--fail-on"};
    for (const CLI::Option* o : app.get_options())
      if (o->count() > 0 &&
          std::find(honoured.begin(), honoured.end(), o->get_name()) == honoured.end())
        return say(fmt::format("{} cannot apply to --from RECORD: the verdict is recomputed with "
                               "the record's own plan (give only --headline, --json, --markdown, "
                               "--fail-on; run a new vouch ab to change the plan)",
                               o->get_name())),
               kExitUsage;
    return AbFromRecord(from, headline, f.json, markdown, fail_on);
  }
  if (!segment && pairs < static_cast<int>(kDefaultMinPairs))
    return say(fmt::format("--pairs {}: a verdict needs at least {} pairs (two ABBA blocks)", pairs,
                           kDefaultMinPairs)),
           kExitUsage;

  // Steps 1 and 2: the arms, and that they are two.
  AbArmFlags x{a_cmd, b_cmd, a_name, b_name, a_env, b_env, controls, sources};
  Arm a, b;
  if (auto rc = BuildArms(f, x, cmd, a, b)) return *rc;
  nlohmann::json arms_json, arms_files_json;
  if (auto rc = CheckTwoArms(f, x, a, b, arms_a, arms_b, arms_json, arms_files_json)) return *rc;

  if (a.argv == b.argv && a.env == b.env)
    return say("arms A and B are one arm: the same command with the same environment; an A/B of "
               "one arm "
               "measures nothing (use --calibrate for an A/A)"),
           kAbRefused;

  AbPlan plan;
  plan.a = a;
  plan.b = b;
  plan.warmup = f.warmup;
  plan.pairs = pairs;
  plan.max_pairs = max_pairs;
  plan.calibrate = calibrate;
  if (calibrate == 0) {
    auto nb = NoiseBandFromPercent(band_pct);
    if (!nb)
      return say(fmt::format("--band {}: must be a positive percentage", band_pct)), kExitUsage;
    plan.band = *nb;
  }
  plan.confidence = confidence;
  plan.allow_cross_boot = cross_boot;
  plan.headline = headline;
  plan.seed = seed ? *seed : std::random_device{}();

  std::vector<std::string> argv = {"ab"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!seed) argv.insert(argv.begin() + 1, {"--seed", std::to_string(plan.seed)});
  RunContext ctx;
  if (int rc = PrepareRun(g, f, {a, b}, "ab", argv, &ctx); rc >= 0) return rc;
  plan.policy = ctx.record.policy;
  ctx.record.planned_legs = AbPlannedLegs(plan);
  ctx.planned_is_max = plan.max_pairs.has_value();  // a sequential look may stop it early
  ctx.record.extra["seed"] = plan.seed;
  ctx.record.extra["arms_check"] = arms_json;
  ctx.record.extra["arms_files"] = arms_files_json;
  verdict::AbRules rules{not_on_gpu, allow_modes};
  ctx.record.extra["ab_plan"] = verdict::AbPlanJson(plan, rules, a_env, b_env);

  // The legs run here, into the record; the protocol sees each one as it was recorded.
  LegRunner run_leg = [&](const Arm& arm, const std::string& role) {
    size_t before = ctx.record.legs.size();
    bool go = RunOneLeg(ctx, arm, role);
    LegStep step;
    if (ctx.record.legs.size() > before) step.leg = &ctx.record.legs.back();
    step.stop = !go;
    return step;
  };
  LookObserver on_look = [](size_t look, size_t done_pairs,
                            const std::optional<SequentialStep>& step) {
    fmt::print(stderr, "{}", RenderLookLine(look, done_pairs, step));
  };
  // The finished blocks' pairs go into the record after every block: a run killed mid-way
  // (a fleet node lost) still says which pairs it had.
  BlockObserver on_block = [&](const AbOutcome& so_far) {
    ctx.record.extra["blocks_so_far"] = AbPairsJson(so_far);
    ctx.record.extra["blocks_so_far"]["band_log"] =
        plan.calibrate > 0 ? nlohmann::json() : nlohmann::json(plan.band.half_width_log);
    (void)WriteRecord(ctx.dir, ctx.record);
  };
  AbOutcome out = RunAbProtocol(plan, run_leg, on_look, on_block);
  if (out.end == AbOutcome::End::kCalibrationFailed) {
    say(out.error);
    ctx.record.status = "failed";
    (void)FinishRun(ctx, false);
    return kAbRefused;
  }
  if (out.end == AbOutcome::End::kDesignFailed) return say(out.error), kExitError;
  if (out.end == AbOutcome::End::kHeadlineRefused) {
    // Known from the first leg: every pair would have been refused for its headline.
    const int ran = static_cast<int>(ctx.record.legs.size());
    ctx.record.extra["refused"] =
        fmt::format("{}; {} of {} planned legs were not run", out.error,
                    ctx.record.planned_legs - ran, ctx.record.planned_legs);
    say(fmt::format("refused: {}; the other {} planned legs were not run", out.error,
                    ctx.record.planned_legs - ran));
    ctx.record.status = "failed";
    (void)FinishRun(ctx, false);
    return kAbRefused;
  }

  if (out.completed() && out.last_step && out.last_step->stop) {
    // A sequential look decided before the last block: the legs not run were never needed.
    int run = static_cast<int>(ctx.record.legs.size());
    ctx.record.extra["stopped_early"] = fmt::format(
        "the sequential design decided at look {} after {} pairs; {} of {} planned legs were not "
        "needed",
        out.looks, out.pairs.size(), ctx.record.planned_legs - run, ctx.record.planned_legs);
    ctx.record.planned_legs = run;
  }
  // The verdict's rules (GPU identity, modes, host noise): src/verdict/ab.h, as --from.
  verdict::AbFinal fin = verdict::FinishAb(plan, out, rules, ctx.record.caveats);
  ctx.record.caveats = fin.caveats;
  if (auto check = ArmsCheckWithGpu(fin.gpu, arms_a, arms_b); !check.is_null())
    ctx.record.extra["arms_check_gpu"] = check;
  ctx.record.extra["verdict"] = fin.verdict;
  int rc = FinishRun(ctx, false);
  if (ctx.record.status == "interrupted")  // the pairs so far, in words (ab_partial.h)
    fmt::print(
        stderr, "{}",
        InterruptedAbSummary(out, static_cast<std::size_t>(plan.max_pairs.value_or(plan.pairs)),
                             a.name, b.name, ctx.dir + "/record.json"));
  if (ctx.record.status == "interrupted" || !ctx.stopped_on_failure.empty()) return rc;

  // The verdict block.
  AbReportContext report;
  report.simulated = ctx.device && ctx.device->Simulated();
  report.caveats = ctx.record.caveats;
  report.a_env = a_env;
  report.b_env = b_env;
  if (!PrintAbVerdict(plan, out, fin, report, f.json, markdown)) return kExitError;
  if (!StoreResult(f.store, "ab", ctx.dir)) return kExitError;
  return AbExitCode(out.decision.verdict, fail_on == "slower");
}

}  // namespace vouch::cli
