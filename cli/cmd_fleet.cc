// vouch fleet ab|run|gate|baseline: the same commands over many nodes of a Slurm cluster.
// The submitter writes a plan (src/fleet/plan.h), submits one job array through sbatch (a task
// is a whole node: --exclusive), waits, and merges the nodes' records into one fleet record.
// Each task runs `vouch fleet worker` on its node, which runs the ordinary command there
// (vouch ab on whole ABBA blocks, or a whole run) into the node's own subtree, under the
// node's own lock and on the GPUs Slurm gave the job. Ctrl-C, SIGTERM and SIGHUP cancel the
// jobs this process submitted (scancel by job id), and only those.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "fleet/evidence.h"
#include "fleet/merge.h"
#include "fleet/merge_runs.h"
#include "fleet/plan.h"
#include "fleet/slurm.h"
#include "fleet/trust.h"
#include "number_flag.h"
#include "record/record_hook.h"
#include "run_common.h"
#include "telemetry/sim_builtin.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch::cli {

int CmdAb(const GlobalOptions&, std::vector<std::string>);
int CmdRun(const GlobalOptions&, std::vector<std::string>);
int CmdGate(const GlobalOptions&, std::vector<std::string>);
int CmdBaseline(const GlobalOptions&, std::vector<std::string>);

namespace {

namespace fs = std::filesystem;

std::atomic<int> g_fleet_signal{0};
void OnFleetSignal(int sig) { g_fleet_signal.store(sig); }

void InstallFleetSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnFleetSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

constexpr double kToolTimeoutS = 30;

// What Slurm says of the jobs of PLAN: scontrol while it remembers them, else sacct.
std::vector<SlurmTask> AskSlurm(const FleetPlan& plan, std::vector<std::string>* notes) {
  std::vector<SlurmTask> out;
  for (const auto& r : plan.rounds) {
    if (r.job_id.empty()) continue;
    int rc = 0;
    auto text = RunTool({"scontrol", "show", "job", "-o", r.job_id}, kToolTimeoutS, &rc);
    std::vector<SlurmTask> got;
    if (text && rc == 0) got = ParseScontrolJobs(*text);
    if (got.empty()) {
      int rc2 = 0;
      auto acct = RunTool(
          {"sacct", "-n", "-P", "-X", "-j", r.job_id, "-o", "JobID,State,ExitCode,NodeList,Reason"},
          kToolTimeoutS, &rc2);
      if (acct && rc2 == 0) got = ParseSacct(*acct);
      if (got.empty() && notes)
        notes->push_back(fmt::format("Slurm reports nothing of job {} (scontrol: {}; sacct: {})",
                                     r.job_id, text ? Trim(*text) : text.error().message,
                                     acct ? Trim(*acct) : acct.error().message));
    }
    for (auto& t : got)
      if (t.array_job_id == r.job_id) out.push_back(t);
  }
  return out;
}

// The batch script of a round. With --gres, the worker runs as a job step (srun) holding those
// GPUs: the batch step of an --exclusive job holds every GPU of the node, the step only the
// K asked for (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES), and vouch samples what it holds.
std::string JobScript(const FleetPlan& plan, const std::string& dir, int round) {
  std::string launcher = plan.slurm.gres.empty()
                             ? std::string("exec ")
                             : fmt::format("exec srun --ntasks=1 --nodes=1 {} ",
                                           ShellQuote("--gres=" + plan.slurm.gres));
  return fmt::format(
      "#!/bin/sh\n# vouch fleet {}: round {} of {} (one array task per node)\n{}{} {}fleet "
      "worker --dir {} --round {}\n",
      FleetKindName(plan.kind), round, dir, launcher, ShellQuote(plan.vouch_binary),
      plan.global_args.empty() ? "" : ShellJoin(plan.global_args) + " ", ShellQuote(dir), round);
}

// Submits round ROUND of PLAN; its job id goes into the plan (written).
Status Submit(FleetPlan& plan, const std::string& dir, int round) {
  auto& r = plan.rounds[static_cast<size_t>(round)];
  std::string script = (fs::path(dir) / "slurm" / fmt::format("round-{}.sh", round)).string();
  if (auto s = MakeDirs((fs::path(dir) / "slurm").string()); !s) return s;
  if (auto s = WriteFileAtomic(script, JobScript(plan, dir, round)); !s) return s;
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  auto argv = SbatchArgv(plan.slurm, fmt::format("vouch-fleet-{}", FleetKindName(plan.kind)),
                         static_cast<int>(r.tasks.size()),
                         (fs::path(dir) / "slurm" / "%A_%a.out").string(), script);
  int rc = 0;
  auto out = RunTool(argv, kToolTimeoutS, &rc);
  if (!out) return out.error();
  if (rc != 0) return MakeError("sbatch refused the job (exit {}): {}", rc, Trim(*out));
  auto id = ParseSbatchJobId(*out);
  if (!id) return id.error();
  r.job_id = *id;
  r.submitted_unix_s = UnixNowSeconds();
  return WriteFleetPlan(dir, plan);
}

std::string Summary(const std::vector<SlurmTask>& tasks) {
  std::map<std::string, std::vector<std::string>> by;
  for (const auto& t : tasks)
    by[t.state].push_back(t.node.empty() ? std::to_string(t.task)
                                         : fmt::format("{}@{}", t.task, t.node));
  std::vector<std::string> parts;
  for (const auto& [state, who] : by)
    parts.push_back(fmt::format("{} {} ({})", who.size(), state, fmt::join(who, " ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Waits until every task of the rounds FROM.. has a final state. On a signal: scancel the
// jobs submitted here (by id), wait for them to end (bounded), and say so. True when
// interrupted.
bool Wait(const FleetPlan& plan, size_t from, double poll_s) {
  std::string last;
  std::vector<std::string> ours;
  size_t expected = 0;
  for (size_t r = from; r < plan.rounds.size(); ++r) {
    ours.push_back(plan.rounds[r].job_id);
    expected += plan.rounds[r].tasks.size();
  }
  bool cancelled = false;
  auto cancel_deadline = std::chrono::steady_clock::time_point::max();
  int empty_polls = 0;
  for (;;) {
    if (g_fleet_signal.load() && !cancelled) {
      std::vector<std::string> argv = {"scancel"};
      argv.insert(argv.end(), ours.begin(), ours.end());
      int rc = 0;
      auto out = RunTool(argv, kToolTimeoutS, &rc);
      fmt::print(stderr,
                 "vouch fleet: signal {}: cancelled job(s) {} (only those this vouch "
                 "submitted){}\n",
                 g_fleet_signal.load(), fmt::join(ours, " "),
                 !out      ? ": " + out.error().message
                 : rc != 0 ? fmt::format(": scancel exit {}: {}", rc, Trim(*out))
                           : "");
      cancelled = true;
      cancel_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    }
    FleetPlan sub = plan;
    sub.rounds.erase(sub.rounds.begin(), sub.rounds.begin() + static_cast<long>(from));
    auto tasks = AskSlurm(sub, nullptr);
    std::string s = Summary(tasks);
    if (s != last) {
      fmt::print(stderr, "vouch fleet: job {}: {}\n", fmt::join(ours, ","), s);
      last = s;
    }
    size_t final_count = 0;
    for (const auto& t : tasks) final_count += SlurmStateFinal(t.state) ? 1 : 0;
    if (tasks.empty()) ++empty_polls;
    if ((tasks.size() >= expected && final_count == tasks.size()) || empty_polls > 5) break;
    if (cancelled && std::chrono::steady_clock::now() > cancel_deadline) {
      fmt::print(stderr, "vouch fleet: the cancelled jobs did not end within 30 s\n");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(poll_s * 1000)));
  }
  return cancelled;
}

// VALUE, never freed (still reachable): freeing a merge's reading was a tenth of its time.
template <class T>
T& KeptUntilExit(T value) {
  static auto* kept = new std::optional<T>();
  *kept = std::move(value);
  return **kept;
}

// Merges DIR, writes DIR/fleet-record.json, prints it; the exit code of the merged verdict.
int MergeAndReport(const std::string& dir, bool json, bool interrupted) {
  auto plan = ReadFleetPlan(dir);
  if (!plan) return fmt::print(stderr, "vouch fleet: {}\n", plan.error().message), kExitError;
  std::vector<std::string> notes;
  auto slurm = AskSlurm(*plan, &notes);
  auto read = ReadFleetEvidence(dir, slurm);
  if (!read) return fmt::print(stderr, "vouch fleet: {}\n", read.error().message), kExitError;
  const FleetEvidence* ev = &KeptUntilExit(std::move(*read));
  nlohmann::json& rec = KeptUntilExit(nlohmann::json());
  std::string text;
  int rc = kExitOk;
  if (plan->kind == FleetKind::kAb) {
    auto m = MergeFleetAb(*ev);
    rec = FleetAbJson(*ev, m);
    text = RenderFleetAbText(m);
    switch (m.verdict) {
      case AbVerdict::kBFaster:
      case AbVerdict::kBSlower:
      case AbVerdict::kNoChange:
        rc = kExitOk;
        break;
      case AbVerdict::kInconclusive:
        rc = 2;
        break;
      case AbVerdict::kRefused:
        rc = 3;
        break;
    }
  } else {
    auto m = MergeFleetRuns(*ev);
    rec = FleetRunsJson(*ev, m);
    text = RenderFleetRunsText(m);
    rc = m.exit_code;
  }
  rec["slurm_notes"] = notes;
  rec["interrupted"] = interrupted;
  const std::string dumped = DumpJson(rec, 2) + "\n";
  if (auto s = WriteFileAtomic((fs::path(dir) / "fleet-record.json").string(), dumped); !s)
    return fmt::print(stderr, "vouch fleet: {}\n", s.error().message), kExitError;
  if (json)
    fmt::print("{}", dumped);
  else
    fmt::print("{}", text);
  for (const auto& n : notes) fmt::print(stderr, "vouch fleet: {}\n", n);
  fmt::print(stderr, "fleet record: {}/fleet-record.json\n", dir);
  if (interrupted) return kExitInterrupted;
  if (!rec.value("complete", true) && rc == kExitOk) return kExitError;
  return rc;
}

std::string SelfExe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("vouch") : p.string();
}

int Submit(FleetKind kind, const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  std::string name = fmt::format("fleet {}", FleetKindName(kind));
  CLI::App app{
      fmt::format("vouch {} over Slurm: one job array, a task per node, each node's evidence in "
                  "DIR/nodes/<node>/, one merged record and verdict (DIR/fleet-record.json).\n"
                  "Options not listed here go to `vouch {}` on every node.",
                  FleetKindName(kind), FleetKindName(kind)),
      name};
  app.allow_extras();
  int nodes = 0, pairs = 0;
  std::optional<std::uint64_t> seed;
  std::string dir, resume, baseline;
  bool json = false, no_wait = false;
  double poll_s = 1;
  FleetPlan plan;
  app.add_option("--nodes", nodes, "nodes (array tasks) to run on")
      ->check(NumberFlag(Count(1, 4096)));
  app.add_option("--partition", plan.slurm.partition, "Slurm partition");
  app.add_option("--gres", plan.slurm.gres, "Slurm gres per node, e.g. gpu:1");
  app.add_option("--account", plan.slurm.account, "Slurm account");
  app.add_option("--time", plan.slurm.time, "Slurm time limit per task, e.g. 00:30:00");
  app.add_option("--exclude", plan.slurm.exclude, "nodes Slurm must not use");
  app.add_option("--sbatch-arg", plan.slurm.extra, "one more sbatch argument (repeatable)");
  app.add_option("--dir", dir, "the shared run directory (default vouch-fleet-KIND-DATE-TIME)");
  app.add_option("--resume", resume, "run only what DIR is missing (a fleet run directory)");
  app.add_option("--poll-s", poll_s, "how often Slurm is asked (1 s)")
      ->check(NumberFlag({0.1, 600}));
  app.add_flag("--no-wait", no_wait, "submit and exit (vouch fleet merge DIR later)");
  app.add_flag("--json", json, "print the fleet record as JSON");
  if (kind == FleetKind::kAb) {
    app.add_option("--pairs", pairs,
                   "pairs in all, split in whole ABBA blocks over the nodes "
                   "(default 4 per node)")
        ->check(NumberFlag(Count(2, 1000000)));
    // Any 64-bit seed: CLI11's own integer conversion checks it.
    app.add_option("--seed", seed, "seed of the tasks' orientation seeds (default random)")
        ->check(Seed64());
  }
  if (kind == FleetKind::kGate)
    app.add_option("--baseline", baseline,
                   "the baseline: a baseline file (every node against it) or a fleet baseline "
                   "directory (each node against its own)");
  if (kind == FleetKind::kBaseline)
    app.add_option("--baseline", baseline, "ignored: each node writes its own baseline.json");
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto say = [&](const std::string& m) { fmt::print(stderr, "vouch {}: {}\n", name, m); };
  std::vector<std::string> node_args = app.remaining();
  for (const auto& a : node_args)
    for (const char* owned : {"--out", "--pairs", "--seed", "--segment", "--max-pairs"})
      if (a == owned || a.rfind(std::string(owned) + "=", 0) == 0)
        return say(fmt::format("{} is the fleet's to set on each node (the fleet has {})", a,
                               std::string(owned) == "--max-pairs"
                                   ? "no sequential mode: give --pairs"
                                   : "its own --dir, --pairs and --seed")),
               kExitUsage;

  InstallFleetSignals();
  if (!resume.empty()) {
    dir = fs::absolute(resume).string();
    auto p = ReadFleetPlan(dir);
    if (!p) return say(p.error().message), kExitError;
    if (p->kind != kind)
      return say(fmt::format("{} is a fleet {} run, not fleet {}", dir, FleetKindName(p->kind),
                             FleetKindName(kind))),
             kExitUsage;
    plan = *p;
    if (auto key = ReadFleetKey(dir); !key) return say(key.error().message), kExitError;
    if (!node_args.empty() || !cmd.empty())
      say(fmt::format("warning: --resume runs the plan's own command and options ({}); ignored: {}",
                      ShellJoin(plan.command), ShellJoin(args)));
    auto slurm = AskSlurm(plan, nullptr);
    for (const auto& t : slurm)
      if (!SlurmStateFinal(t.state))
        return say(fmt::format("job {}_{} is still {}: wait for it or scancel it first",
                               t.array_job_id, t.task, t.state)),
               kExitError;
    auto ev = ReadFleetEvidence(dir, slurm);
    if (!ev) return say(ev.error().message), kExitError;
    auto gaps = FleetGaps(*ev);
    if (gaps.empty()) {
      say("nothing is missing: every task's blocks are recorded; merging");
      return MergeAndReport(dir, json, false);
    }
    FleetRound round;
    int r = static_cast<int>(plan.rounds.size());
    std::uint64_t s = plan.seed;
    for (const auto& gap : gaps) {
      FleetTask t;
      int index = static_cast<int>(round.tasks.size());
      t.id = TaskId(r, index);
      t.covers = gap.task_id;
      t.blocks = kind == FleetKind::kAb ? gap.planned_blocks - gap.done_blocks : 0;
      t.seed = TaskSeed(s, r, index);
      say(fmt::format("resume: task {} runs {} of {}: {}", t.id,
                      kind == FleetKind::kAb ? fmt::format("{} missing block(s)", t.blocks)
                                             : std::string("the missing run"),
                      gap.task_id, gap.why));
      round.tasks.push_back(t);
    }
    plan.rounds.push_back(round);
    if (auto st = WriteFleetPlan(dir, plan); !st) return say(st.error().message), kExitError;
    if (auto st = Submit(plan, dir, r); !st) return say(st.error().message), kExitError;
    say(fmt::format("submitted job {} ({} tasks)", plan.rounds.back().job_id, round.tasks.size()));
    if (no_wait) return kExitOk;
    bool interrupted = Wait(plan, static_cast<size_t>(r), poll_s);
    return MergeAndReport(dir, json, interrupted);
  }

  if (nodes < 1) return say("--nodes N is required (or --resume DIR)"), kExitUsage;
  if (cmd.empty())
    return say(fmt::format("no command: vouch {} --nodes N [OPTIONS] -- CMD ARGS", name)),
           kExitUsage;
  if (kind == FleetKind::kGate && baseline.empty())
    return say("--baseline is required"), kExitUsage;
  plan.kind = kind;
  plan.node_args = node_args;
  plan.command = cmd;
  plan.nodes = nodes;
  plan.vouch_binary = SelfExe();
  // The jobs see the submitter's environment (sbatch --export=ALL, Slurm's default), and
  // its global options here; %n in either becomes each node's name.
  if (!g.sim_path.empty())
    plan.global_args.insert(plan.global_args.end(),
                            {"--sim", FindBuiltinSimScenario(g.sim_path) && !fs::exists(g.sim_path)
                                          ? g.sim_path
                                          : fs::absolute(g.sim_path).string()});
  if (!g.lock_path.empty())
    plan.global_args.insert(plan.global_args.end(),
                            {"--lock-file", fs::absolute(g.lock_path).string()});
  plan.seed = seed ? *seed : std::random_device{}();
  if (!baseline.empty() && kind == FleetKind::kGate)
    plan.baseline = fs::absolute(baseline).string();
  FleetRound round;
  if (kind == FleetKind::kAb) {
    if (pairs == 0) pairs = 4 * nodes;
    auto split = SplitBlocks(pairs, nodes);
    if (!split) return say(split.error().message), kExitUsage;
    plan.pairs = 2 * ((pairs + 1) / 2);
    for (int i = 0; i < nodes; ++i)
      round.tasks.push_back(
          {TaskId(0, i), (*split)[static_cast<size_t>(i)], TaskSeed(plan.seed, 0, i), ""});
  } else {
    for (int i = 0; i < nodes; ++i) round.tasks.push_back({TaskId(0, i), 0, 0, ""});
  }
  plan.rounds.push_back(round);
  if (dir.empty()) dir = DefaultRunDir(fmt::format("fleet-{}", FleetKindName(kind)));
  dir = fs::absolute(dir).string();
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
    return say(fmt::format("{} exists and is not empty: give a new --dir, or --resume {}", dir,
                           dir)),
           kExitUsage;
  if (auto st = MakeDirs((fs::path(dir) / "nodes").string()); !st)
    return say(st.error().message), kExitError;
  // The key every node seals its evidence with (fleet/trust.h); the folder must be one others
  // cannot write.
  if (auto st = CheckOwnFolder(dir, "the fleet directory"); !st)
    return say(st.error().message), kExitError;
  if (auto st = CreateFleetKey(dir); !st) return say(st.error().message), kExitError;
  if (auto st = WriteFleetPlan(dir, plan); !st) return say(st.error().message), kExitError;
  if (auto st = Submit(plan, dir, 0); !st) return say(st.error().message), kExitError;
  say(fmt::format("submitted job {} ({} tasks, one per node) into {}", plan.rounds[0].job_id, nodes,
                  dir));
  if (no_wait) return kExitOk;
  bool interrupted = Wait(plan, 0, poll_s);
  return MergeAndReport(dir, json, interrupted);
}

std::optional<std::string> Env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

std::string ExpandNode(std::string s, const std::string& node) {
  for (size_t at = s.find("%n"); at != std::string::npos; at = s.find("%n", at + node.size()))
    s.replace(at, 2, node);
  return s;
}

}  // namespace

int CmdFleetAb(const GlobalOptions& g, std::vector<std::string> a) {
  return Submit(FleetKind::kAb, g, a);
}
int CmdFleetRun(const GlobalOptions& g, std::vector<std::string> a) {
  return Submit(FleetKind::kRun, g, a);
}
int CmdFleetGate(const GlobalOptions& g, std::vector<std::string> a) {
  return Submit(FleetKind::kGate, g, a);
}
int CmdFleetBaseline(const GlobalOptions& g, std::vector<std::string> a) {
  return Submit(FleetKind::kBaseline, g, a);
}

// Inside a Slurm array task: run this task's share on this node.
int CmdFleetWorker(const GlobalOptions& g, std::vector<std::string> args) {
  CLI::App app{
      "Run one array task of a fleet plan on this node (what the fleet's jobs run; the node "
      "is SLURMD_NODENAME, the task SLURM_ARRAY_TASK_ID). %n in VOUCH_SIM and VOUCH_LOCK_FILE "
      "becomes the node name.",
      "fleet worker"};
  std::string dir;
  int round = 0;
  std::optional<int> task_index;
  app.add_option("--dir", dir, "the fleet run directory")->required();
  app.add_option("--round", round, "the plan's round (0: the first submission)")
      ->check(NumberFlag(Count(0, 1000000)));
  app.add_option("--task", task_index, "array index (default SLURM_ARRAY_TASK_ID)")
      ->check(NumberFlag(Count(0, 1000000)));
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch fleet worker: {}\n", m); };
  auto plan = ReadFleetPlan(dir);
  if (!plan) return say(plan.error().message), kExitError;
  auto key = ReadFleetKey(dir);
  if (!key) return say(key.error().message), kExitError;
  if (!task_index) {
    auto t = Env("SLURM_ARRAY_TASK_ID");
    if (!t)
      return say("no --task and no SLURM_ARRAY_TASK_ID: not inside a Slurm array task"), kExitUsage;
    auto n = ParseInt64In(*t, 0, INT32_MAX, "SLURM_ARRAY_TASK_ID");
    if (!n) return say(n.error().message), kExitUsage;
    task_index = static_cast<int>(*n);
  }
  auto task = FindTask(*plan, Env("SLURM_ARRAY_JOB_ID").value_or(""), *task_index, round);
  if (!task) return say(task.error().message), kExitError;
  std::string node = Env("SLURMD_NODENAME").value_or(ReadHostInfo().hostname);
  if (!SafeNodeName(node))
    return say(fmt::format("node name '{}' is not a safe directory name", node)), kExitError;
  int attempt = 0;
  if (auto rc = Env("SLURM_RESTART_COUNT")) {
    auto n = ParseInt64In(*rc, 0, 1000000, "SLURM_RESTART_COUNT");
    if (!n) return say(n.error().message), kExitUsage;
    attempt = static_cast<int>(*n);
  }
  std::string seg =
      (fs::path(dir) / "nodes" / node / fmt::format("{}-a{}", task->id, attempt)).string();
  std::error_code ec;
  if (fs::exists(seg, ec))
    return say(fmt::format("{} exists already: this attempt ran before", seg)), kExitError;
  if (auto st = MakeDirs(seg); !st) return say(st.error().message), kExitError;

  GlobalOptions local = g;
  local.sim_path = ExpandNode(g.sim_path, node);
  local.lock_path = ExpandNode(g.lock_path, node);
  nlohmann::json info = {{"schema", "vouch.fleet.node"},
                         {"node", node},
                         {"hostname", ReadHostInfo().hostname},
                         {"task", task->id},
                         {"covers", task->covers},
                         {"round", round},
                         {"attempt", attempt},
                         {"job_id", Env("SLURM_JOB_ID").value_or("")},
                         {"array_job_id", Env("SLURM_ARRAY_JOB_ID").value_or("")},
                         {"array_task", *task_index},
                         {"lock_file", local.lock_path},
                         {"started_unix_s", UnixNowSeconds()},
                         {"status", "running"}};
  // The GPUs Slurm gave the job (--gres): the command sees them through CUDA_VISIBLE_DEVICES,
  // and vouch samples what the command can see (telemetry/gpu_select.h).
  if (auto gpus = GpusFromSlurm(Env)) {
    if (!Env("CUDA_VISIBLE_DEVICES"))
      ::setenv("CUDA_VISIBLE_DEVICES", gpus->cuda_visible_devices.c_str(), 1);
    info["gpus"] = {{"cuda_visible_devices", gpus->cuda_visible_devices}, {"source", gpus->source}};
  } else {
    info["gpus"] = {{"cuda_visible_devices", nullptr}, {"source", "none from Slurm: all GPUs"}};
  }
  for (const char* v :
       {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_JOB_PARTITION", "SLURM_CLUSTER_NAME"})
    if (auto val = Env(v)) info["slurm_env"][v] = *val;
  std::string info_path = (fs::path(seg) / "node.json").string();
  // Each evidence file is sealed as it is written (fleet/trust.h): node.json now and at the
  // end, the record at every write (an A/B's after every block), the baseline at the end.
  const AttemptIdentity ident{node, task->id, attempt};
  auto seal = [&] {
    if (auto st = SealFleetAttempt(*key, seg, ident); !st)
      say(fmt::format("warning: {}: the merge will refuse this node's evidence",
                      st.error().message));
  };
  struct HookReset {
    ~HookReset() { SetRecordWrittenHook({}); }
  } hook_reset;
  SetRecordWrittenHook([&](const std::string&) { seal(); });
  if (auto st = WriteFileAtomic(info_path, DumpJson(info, 2) + "\n"); !st)
    return say(st.error().message), kExitError;
  seal();

  // The command's own run directory inside the attempt's (node.json sits beside it).
  const std::string out = (fs::path(seg) / "run").string();
  std::vector<std::string> cargs = plan->node_args;
  int rc = kExitError;
  switch (plan->kind) {
    case FleetKind::kAb:
      cargs.insert(cargs.end(), {"--pairs", std::to_string(2 * task->blocks), "--seed",
                                 std::to_string(task->seed), "--segment", "--out", out});
      cargs.push_back("--");
      cargs.insert(cargs.end(), plan->command.begin(), plan->command.end());
      rc = CmdAb(local, cargs);
      break;
    case FleetKind::kRun:
      cargs.insert(cargs.end(), {"--out", out, "--"});
      cargs.insert(cargs.end(), plan->command.begin(), plan->command.end());
      rc = CmdRun(local, cargs);
      break;
    case FleetKind::kGate: {
      // The node's own baseline when the baseline is a fleet baseline directory.
      auto b = FleetBaselineFor(plan->baseline, node);
      if (!b) {
        info["status"] = "failed";
        info["error"] = b.error().message;
        (void)WriteFileAtomic(info_path, DumpJson(info, 2) + "\n");
        seal();
        return say(b.error().message), kExitError;
      }
      info["baseline"] = *b;
      cargs.insert(cargs.end(), {"--baseline", *b, "--out", out, "--json", "--"});
      cargs.insert(cargs.end(), plan->command.begin(), plan->command.end());
      rc = CmdGate(local, cargs);
      break;
    }
    case FleetKind::kBaseline:
      cargs.insert(cargs.end(),
                   {"--baseline", (fs::path(seg) / "baseline.json").string(), "--out", out, "--"});
      cargs.insert(cargs.end(), plan->command.begin(), plan->command.end());
      rc = CmdBaseline(local, cargs);
      break;
  }
  auto rec = ReadRecordJson(out);
  std::string status = rec ? rec->value("status", "unknown") : "failed";
  info["status"] = status;
  info["exit_code"] = rc;
  info["ended_unix_s"] = UnixNowSeconds();
  (void)WriteFileAtomic(info_path, DumpJson(info, 2) + "\n");
  seal();
  if (status == "interrupted") return kExitInterrupted;
  // A verdict of any kind (or a gate that failed) is the task done; an error is not.
  return status == "complete" ? kExitOk : (rc == kExitOk ? kExitError : rc);
}

// Merges a fleet directory again (Slurm is asked when it answers).
int CmdFleetMerge(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Merge a fleet run directory into DIR/fleet-record.json and print its verdict",
               "fleet merge"};
  std::string dir;
  bool json = false;
  app.add_option("DIR", dir, "the fleet run directory")->required();
  app.add_flag("--json", json, "print the fleet record as JSON");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  return MergeAndReport(dir, json, false);
}

}  // namespace vouch::cli
