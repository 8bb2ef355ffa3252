#include "run_common.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>

#include "gputrace/leg_trace.h"
#include "leg_notes.h"
#include "modes_check.h"
#include "number_flag.h"
#include "record/preflight.h"
#include "roof_check.h"
#include "stats/percentiles.h"
#include "stats/serving_load.h"
#include "telemetry/sim_builtin.h"
#include "terminal_guard.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/redact.h"
#include "util/strings.h"

namespace vouch::cli {

void RunFlags::Add(CLI::App& app, bool with_reps) {
  if (with_reps) {
    app.add_option("--warmup", warmup, "warm-up legs, discarded with cause 'warmup' (1)")
        ->check(NumberFlag(Count(0, 1000)));
    app.add_option("--reps", reps, "measured legs, one process each (3)")
        ->check(NumberFlag(Count(1, 100000)));
  }
  app.add_option(
      "--metric", metric_specs,
      "metric source (repeatable): channel, llama-bench, vllm:FILE (vllm bench serve, SGLang "
      "bench_serving or GuideLLM results), gbench:FILE, nvbench:FILE, hyperfine:FILE, "
      "pytest-benchmark:FILE, "
      "regex:NAME:UNIT:higher|lower:PATTERN, json:NAME:UNIT:higher|lower:/POINTER "
      "(`vouch help metrics`)");
  app.add_option("--expect-equal", expect_equal,
                 "metric that must be equal across legs (a checksum)");
  app.add_option("--expect", expect,
                 "NAME=N: metric that must equal N in every leg (a dispatch count)");
  app.add_option("--env", env, "K=V added to the command's environment (repeatable)");
  app.add_option("--cwd", cwd, "working directory of the command");
  app.add_option("--artifact", artifacts, "file or directory to hash into the record (repeatable)");
  app.add_option("--repo", repos,
                 "git repository whose commit and dirty flag are recorded (repeatable)");
  app.add_option("--out", out, "run directory (default vouch-KIND-DATE-TIME)");
  WindowFlags::Add(app);
  app.add_option("--disk-budget-gib", disk_budget_gib,
                 "free disk needed under the run directory (1 GiB)")
      ->check(NumberFlag(NotNegative(kMaxGib)));
  app.add_flag("--allow-busy", allow_busy,
               "run even if another compute process is on the GPU (recorded)");
  app.add_option("--min-requests", min_requests,
                 "a serving leg (vllm bench serve, SGLang, GuideLLM) that completed fewer "
                 "requests is flagged and gives no percentile as a figure; with or without it, "
                 "a percentile is a figure only when the count supports it at 99 % confidence")
      ->check(NumberFlag(Count(1, 1LL << 40)));
  app.add_flag("--tee", tee, "show the command's output on the terminal");
  app.add_flag("--shell", shell, "run the command through /bin/sh -c");
  app.add_option("--output-cap-mib", output_cap_mib,
                 "keep at most this much of each output stream per leg")
      ->check(NumberFlag({0, kMaxGib * 1024, true}));
  app.add_option("--progress-every", progress_every_s,
                 "when stderr is not a terminal (a CI log), a plain progress line every S seconds "
                 "of a leg; 0: none (30)")
      ->check(Seconds(0, kMaxTimeoutS));
  app.add_flag("--json", json, "print the record as JSON at the end");
  app.add_flag("--overwrite", overwrite,
               "--out may hold an earlier run: replace it (its record.json and legs/ are "
               "removed; without this flag a directory that holds files is refused)");
  app.add_flag("--keep-going", keep_going,
               "run every planned leg even after one whose command failed (by default the run "
               "stops at the first failing leg, warm-up included)");
  policy.Add(app);
  store.Add(app);
}

Result<std::vector<std::pair<std::string, std::string>>> ParseEnv(
    const std::vector<std::string>& kv) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : kv) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      // --env takes every word up to the next option: a command given without `--` lands here.
      return MakeError(
          "--env '{}': expected NAME=VALUE{}", RedactArg(s),
          eq == std::string::npos
              ? "; if it is the command, the command to measure goes after `--` (vouch ab "
                "--a-env K=V --b-env K=V -- CMD ARGS)"
              : "");
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

RunContext::~RunContext() {
  if (!record_open || std::uncaught_exceptions() == 0) return;
  try {
    record.status = "failed";
    record.missing.push_back(
        "vouch stopped on an internal error before the run's end (the error is on vouch's "
        "stderr): the legs recorded here are the ones that finished");
    record.ended_unix_s = UnixNowSeconds();
    (void)WriteRecord(dir, record);
  } catch (...) {
  }
}

void RunWarmupAndMeasured(RunContext& ctx, const Arm& arm, int warmup, int reps) {
  RunRecord& r = ctx.record;
  r.planned_legs = warmup + reps;
  bool go = true;
  for (int i = 0; go && i < warmup; ++i) go = RunOneLeg(ctx, arm, "warmup");
  // A warm-up window too short for the busy-reading floor: every measured leg of its length
  // would be refused the same way, so they are not run (unless --keep-going).
  if (go && warmup > 0 && !ctx.keep_going && !r.legs.empty() && r.legs.back().role == "warmup")
    if (auto why = WarmupTooShort(r.legs.back())) {
      ctx.stopped_on_failure =
          fmt::format("stopped after the warm-up, before {} measured leg{}: {}", reps,
                      reps == 1 ? "" : "s", *why);
      r.status = "failed";
      r.missing.push_back(ctx.stopped_on_failure);
      return;
    }
  for (int i = 0; go && i < reps; ++i) go = RunOneLeg(ctx, arm, "measured");
}

bool RunMoreMeasured(RunContext& ctx, const Arm& arm, int reps) {
  ctx.record.planned_legs += reps;
  bool go = true;
  for (int i = 0; go && i < reps; ++i) go = RunOneLeg(ctx, arm, "measured");
  return go;
}

int PrepareRun(const GlobalOptions& g, const RunFlags& f, std::vector<Arm> arms,
               const std::string& kind, const std::vector<std::string>& vouch_argv,
               RunContext* ctx) {
  ctx->name = kind;
  ctx->keep_going = f.keep_going;
  ctx->min_requests = f.min_requests;
  ctx->progress_every_s = f.progress_every_s;
  auto say = [&](const std::string& m) { fmt::print(stderr, "vouch {}: {}\n", kind, m); };
  for (const auto& a : arms)
    if (a.argv.empty()) {
      say("no command; usage: vouch " + kind + " [OPTIONS] -- CMD ARGS...");
      return kExitUsage;
    }
  for (const auto& s : f.metric_specs) {
    auto m = ParseMetricSpec(s);
    if (!m) {
      say(m.error().message);
      return kExitUsage;
    }
    ctx->config.metrics.push_back(*m);
  }
  for (const auto& s : f.expect_equal) {
    auto e = ParseExpectEqual(s);
    if (!e) return say(e.error().message), kExitUsage;
    ctx->expectations.push_back(*e);
  }
  for (const auto& s : f.expect) {
    auto e = ParseExpect(s);
    if (!e) return say(e.error().message), kExitUsage;
    ctx->expectations.push_back(*e);
  }
  if (f.gpu_trace || !f.gpu_trace_lib.empty()) {
    auto lib = FindTracerLibrary(f.gpu_trace_lib);
    if (!lib) return say(lib.error().message), kExitUsage;
    ctx->config.gpu_trace_lib = *lib;
    if (auto cost = gputrace::TracerLaunchCostOverride(); !cost)
      return say(cost.error().message), kExitUsage;
  }
  ctx->device = OpenDevice(g);
  if (!ctx->device) return kExitError;
  // Each arm's command sees the GPUs its CUDA_VISIBLE_DEVICES leaves it; arms on different
  // GPUs could never pair, so they are refused here, before any leg runs.
  std::optional<GpuSelection> chosen;
  for (const auto& a : arms) {
    auto sel = ChooseGpus(f.gpus, *ctx->device, a.env);
    if (!sel)
      return say(arms.size() > 1 ? fmt::format("arm {}: {}", a.name, sel.error().message)
                                 : sel.error().message),
             kExitUsage;
    if (chosen && sel->gpus != chosen->gpus) {
      say(fmt::format(
          "arm {} would run on GPU(s) {} ({}) and arm {} on GPU(s) {} ({}): windows on different "
          "GPUs never pair; run both arms on the same GPUs",
          arms.front().name, fmt::join(chosen->gpus, ","), chosen->source, a.name,
          fmt::join(sel->gpus, ","), sel->source));
      return kExitInvalidWindow;
    }
    if (!chosen) chosen = std::move(*sel);
  }
  for (const auto& n : chosen->notes) say("warning: " + n);
  const std::vector<int>* gpus = &chosen->gpus;
  ctx->dir = !f.out.empty() ? f.out : !f.default_out.empty() ? f.default_out : DefaultRunDir(kind);
  Preflight pre =
      RunPreflight(*ctx->device, *gpus, f.allow_busy,
                   static_cast<std::uint64_t>(f.disk_budget_gib * (1ull << 30)), ctx->dir);
  for (const auto& w : pre.warnings) say("warning: " + w);
  if (!pre.ok) {
    for (const auto& p : pre.problems) say("preflight refused: " + p);
    return kExitError;
  }
  // From here on a terminating signal (a closed ssh session, Ctrl-C, kill) is noted, not
  // fatal: the leg is stopped, the record written, locked clocks reset.
  (void)InstallInterruptHandler();
  auto lock = TakeLock(g, kind, ShellJoin(RedactArgv(arms.front().argv)), f.lock_timeout_s);
  if (!lock) return say(lock.error().message), Interrupted() ? InterruptExitCode() : kExitError;
  ctx->lock.emplace(std::move(*lock));
  // Claimed by a flock on the folder itself: two runs given one --out, even with different
  // lock files, can never both write there.
  auto claimed = ClaimRunDir(ctx->dir, f.out.empty(), f.overwrite, &ctx->dir_hold);
  if (!claimed) return say(claimed.error().message), kExitError;
  ctx->dir = *claimed;
  if (auto s = MakeDirs(ctx->dir); !s) return say(s.error().message), kExitError;
  auto hashes = HashArtifacts(f.artifacts);
  if (!hashes) return say(hashes.error().message), kExitError;

  RunRecord& r = ctx->record;
  r.kind = kind;
  r.vouch_argv = vouch_argv;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})
    if (const char* v = std::getenv(name)) r.reproduce_env.emplace_back(name, v);
  // What the run depended on beyond its own arguments: the simulated device (and where its
  // replay starts), a lock file other than the default, the directory it ran in.
  namespace fs = std::filesystem;
  std::error_code cwd_ec;
  r.cwd = fs::current_path(cwd_ec).string();
  if (!g.sim_path.empty()) {
    // A built-in scenario is named as given: it needs no file (vouch --sim h200-busy).
    const bool builtin = FindBuiltinSimScenario(g.sim_path) && !fs::exists(g.sim_path, cwd_ec);
    r.global_argv = {"--sim", builtin
                                  ? g.sim_path
                                  : fs::absolute(g.sim_path, cwd_ec).lexically_normal().string()};
    if (const char* v = std::getenv("VOUCH_SIM_START"))
      r.reproduce_env.emplace_back("VOUCH_SIM_START", v);
  }
  if (g.lock_path != DefaultLockPath())
    r.global_argv.insert(
        r.global_argv.end(),
        {"--lock-file", fs::absolute(g.lock_path, cwd_ec).lexically_normal().string()});
  r.arms = std::move(arms);
  r.started_unix_s = UnixNowSeconds();
  r.policy = f.policy.Apply(Policy{});
  r.preflight = {
      {"ok", pre.ok},
      {"warnings", pre.warnings},
      {"busy_processes", pre.busy_processes},
      {"allow_busy", f.allow_busy},
      {"lock_file", g.lock_path},
      {"disk_budget_bytes", static_cast<std::uint64_t>(f.disk_budget_gib * (1ull << 30))}};
  r.environment = CaptureEnvironment(*ctx->device, *gpus);
  r.revisions = CaptureRevisions(f.cwd, f.repos, {ctx->dir, g.lock_path});
  r.artifacts = *hashes;
  r.contention = {{"start", CaptureContention(*ctx->device, *gpus)}};
  if (ctx->device->Simulated())
    r.caveats.push_back("simulated device: the clocks are a replay, not a measurement");
  for (const auto& w : pre.warnings) r.caveats.push_back(w);
  for (const auto& n : chosen->notes) r.caveats.push_back(n);
  r.environment["gpu_selection"] = {
      {"gpus", chosen->gpus}, {"named", chosen->named}, {"source", chosen->source}};
  if (!ctx->config.gpu_trace_lib.empty())
    r.environment["gpu_trace"] = {{"library", ctx->config.gpu_trace_lib},
                                  {"files", "legs/*/gpu-trace.PID.jsonl"}};

  LegConfig& c = ctx->config;
  c.window.gpus = *gpus;
  c.window.gpus_named = chosen->named;
  c.window.gpu_source = chosen->source;
  c.window.interval_s = f.interval_ms / 1000;
  c.window.policy = r.policy;
  c.window.lock_clocks_mhz = f.lock_clocks;
  c.window.require_lock_clocks = f.require_lock_clocks;
  c.timeout_s = f.timeout_s;
  c.tee = f.tee;
  if (f.output_cap_mib)
    c.output_cap_bytes = static_cast<std::uint64_t>(*f.output_cap_mib * (1 << 20));
  if (auto s = WriteRecord(ctx->dir, r); !s) return say(s.error().message), kExitError;
  if (auto s = ctx->journal.Open(ctx->dir); !s) return say(s.error().message), kExitError;
  if (ctx->spill_legs) ctx->record.legs_journal = ctx->journal.path();
  ctx->record_open = true;
  if (ctx->device->Simulated()) say("SIMULATED DEVICE: " + ctx->device->Describe());
  if (!f.tee)
    say(
        fmt::format("the command's output is kept, not shown: {}/legs/*/stdout.txt and "
                    "stderr.txt (--tee shows it here too)",
                    std::filesystem::absolute(ctx->dir, cwd_ec).string()));
  ctx->started = ctx->last_leg_end = std::chrono::steady_clock::now();
  return -1;
}

std::optional<double> RunEtaSeconds(const RunContext& ctx,
                                    std::chrono::steady_clock::time_point now) {
  const auto done = LegCount(ctx.record);
  if (done == 0) return std::nullopt;
  const double per_leg =
      std::chrono::duration<double>(ctx.last_leg_end - ctx.started).count() / done;
  const int left = std::max(0, ctx.record.planned_legs - done);
  const double since_last = std::chrono::duration<double>(now - ctx.last_leg_end).count();
  return std::max(0.0, left * per_leg - since_last);
}

bool RunOneLeg(RunContext& ctx, const Arm& arm, const std::string& role) {
  RunRecord& r = ctx.record;
  // The legs before this one are in the journal: only the last stays in memory.
  if (ctx.spill_legs) SpillLegs(r);
  int index = LegCount(r);
  // On a terminal one line redrawn in place (not with --tee: the command's output would
  // tear it); elsewhere (a CI log) a plain line every --progress-every seconds.
  const bool tty = ::isatty(2) && !ctx.config.tee;
  const bool plain = !::isatty(2) && ctx.progress_every_s > 0;
  auto last_print = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  double next_plain_s = ctx.progress_every_s;
  auto eta_text = [&](std::chrono::steady_clock::time_point now) {
    auto eta = RunEtaSeconds(ctx, now);
    return eta ? fmt::format("run ETA {}{}", ctx.planned_is_max ? "at most " : "",
                             HumanDuration(*eta))
               : std::string();
  };
  ProgressFn progress = [&](const std::optional<Sample>& s, double elapsed) {
    auto now = std::chrono::steady_clock::now();
    const std::string sm = s && s->sm_mhz ? fmt::format("{} MHz", *s->sm_mhz) : std::string("n/a");
    const std::string eta = eta_text(now);
    if (plain) {
      if (elapsed < next_plain_s) return;
      while (next_plain_s <= elapsed) next_plain_s += ctx.progress_every_s;
      fmt::print(stderr, "leg {} of {} ({} {}): running, {} so far, SM clock {}{}\n", index + 1,
                 r.planned_legs, arm.name, role, HumanDuration(elapsed), sm,
                 eta.empty() ? "" : "; " + eta);
      std::fflush(stderr);
      return;
    }
    if (now - last_print < std::chrono::milliseconds(250)) return;
    last_print = now;
    std::string line = TerminalSafe(fmt::format("[leg {} of {}: {} {}] {:6.1f} s  SM clock {}{}",
                                                index + 1, r.planned_legs, arm.name, role, elapsed,
                                                sm, eta.empty() ? "" : "  " + eta));
    // Never wider than the terminal: a wrapped line cannot be redrawn with '\r'.
    struct winsize ws {};
    if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col)
      line.resize(ws.ws_col - 1u);
    // vouch's own control sequences: past the guard, the line itself escaped above.
    fmt::print(RawStderr(), "\r{}\033[K", line);
  };
  auto leg = RunLeg(*ctx.device, ctx.executor, ctx.config, ctx.dir, arm, index, role,
                    tty || plain ? progress : ProgressFn());
  ctx.last_leg_end = std::chrono::steady_clock::now();
  if (tty) fmt::print(RawStderr(), "\r\033[K");
  if (!leg) {
    r.caveats.push_back(leg.error().message);
    if (Interrupted()) ctx.interrupted = true;
    r.status = ctx.interrupted ? "interrupted" : "failed";
    (void)WriteRecord(ctx.dir, r);
    fmt::print(stderr, "vouch {}: {}\n", ctx.name, leg.error().message);
    return false;
  }
  // A signal during the leg, or after it while its evidence was read: stop here.
  if (leg->result.interrupted || Interrupted()) ctx.interrupted = true;
  r.legs.push_back(std::move(*leg));
  // A rate of bytes or FLOPs above the GPU's roof is not a figure (src/roof): refused.
  RefuseAboveRoof(r.legs.back());
  // The journal first: the terminal may be gone (a closed ssh session) by the time we print.
  // Appended, not the whole record rewritten: constant cost per leg (record.json is written
  // again at the end, and a reader of a killed run reassembles it from the journal).
  auto written = ctx.journal.Append(r.legs.back());
  const LegRecord& l = r.legs.back();
  if (!ctx.expectations.empty() && l.role == "measured" && l.result.Succeeded() &&
      l.metrics_error.empty()) {
    ctx.expect_metrics.push_back(l.metrics);
    ctx.expect_numbers.push_back(l.index + 1);
  }
  std::string clock;
  if (l.window.gpus.size() == 1 && l.window.gpus[0].fold.sm_mhz) {
    clock = fmt::format(", SM median {:.0f} MHz", l.window.gpus[0].fold.sm_mhz->median);
  } else if (l.window.gpus.size() > 1) {
    std::vector<std::string> per;
    for (const auto& g : l.window.gpus)
      per.push_back(g.fold.busy_readings > 0 && g.fold.sm_mhz
                        ? fmt::format("GPU {} {:.0f} MHz", g.fold.gpu, g.fold.sm_mhz->median)
                        : fmt::format("GPU {} idle", g.fold.gpu));
    clock = fmt::format(", SM median {}", fmt::join(per, ", "));
  }
  // The first leg that ran to its end shows what every leg would: a metric source that cannot
  // read the output, a --headline the legs do not report. Said now, not after every leg.
  std::string first_leg_stop;
  // (Not after the last planned leg: there is nothing left to spare.)
  if (!ctx.first_leg_checked && l.result.Succeeded() && !ctx.interrupted && !ctx.keep_going &&
      LegCount(r) < r.planned_legs) {
    ctx.first_leg_checked = true;
    first_leg_stop = FirstLegProblem(l);
    if (first_leg_stop.empty() && ctx.first_leg_check) first_leg_stop = ctx.first_leg_check(l);
  }
  // A warm-up is discarded whatever its window says, but a failed command is still shown.
  const bool warmup = role == "warmup";
  const bool show_reasons = warmup ? !l.result.Succeeded() : !l.valid;
  // No ETA for legs that will not run: after a crash (without --keep-going), Ctrl-C or a stop.
  const bool more = LegCount(r) < r.planned_legs && !ctx.interrupted && first_leg_stop.empty() &&
                    (l.result.Succeeded() || ctx.keep_going);
  const std::string eta = more ? eta_text(ctx.last_leg_end) : std::string();
  fmt::print(stderr, "leg {} of {} ({} {}): {}, {:.2f} s{}{}{}\n", index + 1, r.planned_legs,
             arm.name, role,
             warmup ? (l.result.Succeeded() ? "discarded (warmup)" : "discarded (warmup), FAILED")
                    : (l.valid ? "valid" : "INVALID"),
             static_cast<double>(l.result.wall_ns) / 1e9, clock,
             show_reasons ? fmt::format(": {}", fmt::join(l.reasons, "; ")) : "",
             eta.empty() ? "" : " (" + eta + ")");
  for (const auto& w : l.window.verdict.warnings)
    fmt::print(stderr, "vouch {}: warning: leg {}: {}\n", ctx.name, index + 1, w);
  if (l.gpu_trace.is_object() && l.gpu_trace.contains("tracer_cost") &&
      l.gpu_trace["tracer_cost"].is_object())
    if (std::string w = l.gpu_trace["tracer_cost"].value("warning", ""); !w.empty())
      fmt::print(stderr, "vouch {}: warning: leg {}: {}\n", ctx.name, index + 1, w);
  for (const auto& e : l.evidence_errors)
    fmt::print(stderr, "vouch {}: evidence: {}\n", ctx.name, e);
  std::error_code abs_ec;
  const std::string leg_dir =
      std::filesystem::absolute(std::filesystem::path(ctx.dir) / l.dir, abs_ec).string();
  if (!l.result.Succeeded() && !ctx.told_stderr) {
    // The command's own words say why it failed better than its exit status does.
    ctx.told_stderr = true;
    const std::string err = leg_dir + "/stderr.txt";
    const std::string tail = TailForTerminal(err);
    if (tail.empty())
      fmt::print(stderr, "vouch {}: leg {}'s command wrote nothing on stderr (its stdout: {})\n",
                 ctx.name, index + 1, leg_dir + "/stdout.txt");
    else
      fmt::print(stderr, "vouch {}: the last lines of leg {}'s stderr (all of it: {}):\n{}",
                 ctx.name, index + 1, err, tail);
  }
  if (l.result.Succeeded() && l.metrics_error.empty() && !HasOwnMetric(l) && !ctx.told_no_metric) {
    // A number only on stdout is not read unless asked: say so at the first leg.
    ctx.told_no_metric = true;
    const std::string out = leg_dir + "/stdout.txt";
    const std::string first = FirstLineForTerminal(out);
    fmt::print(stderr,
               "vouch {}: warning: leg {} reported no metric of its own, only vouch's (wall time, "
               "exit status, memory, busy fraction): give --metric (llama-bench, gbench:FILE, "
               "json:NAME:UNIT:higher|lower:/POINTER, regex:NAME:UNIT:higher|lower:PATTERN, ...; "
               "`vouch help metrics`), or have the command append JSON lines {{\"name\", "
               "\"value\", \"unit\", \"better\"}} to the file named in $VOUCH_METRICS. {}\n",
               ctx.name, index + 1,
               first.empty() ? fmt::format("Its stdout was empty ({}).", out)
                             : fmt::format("Its stdout began: {} ({})", first, out));
  }
  if (!written) {
    fmt::print(stderr, "vouch {}: {}; the legs' own evidence is under {}\n", ctx.name,
               written.error().message, ctx.dir);
    r.status = "failed";
    return false;
  }
  if (!ctx.interrupted && ((!l.result.Succeeded() && !ctx.keep_going) || !first_leg_stop.empty())) {
    const int left = r.planned_legs - LegCount(r);
    ctx.stopped_on_failure = fmt::format(
        "stopped at leg {} of {} ({} {}): {}; {} planned leg{} not run (--keep-going "
        "runs them)",
        index + 1, r.planned_legs, arm.name, role,
        first_leg_stop.empty() ? "the command " + l.result.Describe() : first_leg_stop, left,
        left == 1 ? " was" : "s were");
    r.status = "failed";
    r.missing.push_back(ctx.stopped_on_failure);
    if (auto s = WriteRecord(ctx.dir, r); !s)
      fmt::print(stderr, "vouch {}: {}\n", ctx.name, s.error().message);
    return false;  // FinishRun says why, once
  }
  return !ctx.interrupted;
}

int FinishRun(RunContext& ctx, bool print_summary) {
  RunRecord& r = ctx.record;
  r.violations = CheckExpectations(ctx.expectations, ctx.expect_metrics, ctx.expect_numbers);
  int done = LegCount(r);
  if (ctx.interrupted || Interrupted()) {
    r.status = "interrupted";
    const int sig = InterruptSignal();
    r.missing.push_back(fmt::format("{} of {} planned legs did not run (interrupted{})",
                                    r.planned_legs - done, r.planned_legs,
                                    sig > 0 ? " by " + SignalName(sig) : std::string()));
  } else if (r.status == "running") {
    r.status = done < r.planned_legs ? "failed" : "complete";
    if (done < r.planned_legs)
      r.missing.push_back(
          fmt::format("{} of {} planned legs did not run", r.planned_legs - done, r.planned_legs));
  }
  r.ended_unix_s = UnixNowSeconds();
  std::vector<int> gpus = ctx.config.window.gpus;
  r.contention["end"] = CaptureContention(*ctx.device, gpus);
  // --min-requests: a serving leg that completed fewer gives no percentile as a figure, even
  // one its count supports (the legs already dropped those it cannot).
  if (ctx.min_requests)
    for (auto& l : r.legs)
      if (l.role == "measured" && l.valid)
        for (auto& line : RefuseUnsupportedPercentiles(&l.metrics, ctx.min_requests))
          l.result.notes.push_back(kServingNotePrefix + line);
  for (const auto& w : LegPercentileWarnings(r.legs, ctx.min_requests)) {
    fmt::print(stderr, "vouch {}: warning: {}\n", ctx.name, w);
    r.caveats.push_back(w);
  }
  ctx.record_open = false;
  auto journal = ctx.journal.Close();
  if (!journal) r.caveats.push_back("journal: " + journal.error().message);
  auto written = WriteRecord(ctx.dir, r);
  nlohmann::json j = ToJson(r);
  if (print_summary) PrintRecordText(r, j, stdout);
  fmt::print(stderr, "record: {}/record.json\n", ctx.dir);
  if (!written) {
    fmt::print(stderr, "vouch {}: {}\n", ctx.name, written.error().message);
    return kExitError;
  }
  if (r.status == "interrupted") return InterruptExitCode();
  if (!ctx.stopped_on_failure.empty()) {
    // The summary just printed says it ("missing: ..."); said again only without it.
    if (!print_summary) fmt::print(stderr, "vouch {}: {}\n", ctx.name, ctx.stopped_on_failure);
    return kExitError;
  }
  int valid = j.value("valid_legs", 0);
  if (valid == 0) {
    fmt::print(
        stderr,
        "vouch {}: no valid measured leg: no number can be quoted (reasons above, per leg)\n",
        ctx.name);
    return kExitError;
  }
  if (!r.violations.empty()) {
    for (const auto& v : r.violations)
      fmt::print(stderr, "vouch {}: expectation violated: {}\n", ctx.name, v.message);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace vouch::cli
