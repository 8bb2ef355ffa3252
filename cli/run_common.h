// What `vouch run`, `baseline`, `gate` and `ab` share: the flags of a run, the preflight,
// the lock, the record written after every leg, the progress line and the final summary.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "common.h"
#include "lock/lock.h"
#include "record/journal.h"
#include "record/record.h"
#include "store_hook.h"

namespace vouch::cli {

struct RunFlags : WindowFlags {
  int warmup = 1;
  int reps = 3;
  std::vector<std::string> metric_specs, expect_equal, expect, env, artifacts, repos;
  std::string out, cwd;
  double disk_budget_gib = 1;
  bool allow_busy = false, tee = false, shell = false, json = false;
  bool allow_cross_boot = false;
  bool keep_going = false;  // run every planned leg even after one whose command failed
  bool overwrite = false;   // --out may hold an earlier run: it is replaced
  // --min-requests: a serving leg (vllm bench serve) that completed fewer is flagged.
  std::optional<long long> min_requests;
  // The run directory when --out is not given (DefaultRunDir(KIND) when empty). A default
  // directory that exists already gets a -2, -3... suffix; an --out that holds files is
  // refused unless --overwrite.
  std::string default_out;
  std::optional<double> output_cap_mib;
  // When stderr is not a terminal (a CI log): a plain progress line every this many seconds
  // of a leg (0: none). On a terminal the progress line is redrawn in place instead.
  double progress_every_s = 30;
  PolicyFlags policy;
  StoreFlag store;  // --store: the result goes into the history store too
  // WITH_REPS: add --warmup/--reps (baseline has --trials instead; ab has --pairs).
  void Add(CLI::App& app, bool with_reps);
};

// The claim on a run folder: an exclusive flock(2) on the folder itself, held for the whole
// run and dropped by the kernel however vouch ends (SIGKILL included), so a live run's
// folder is never taken by a second run, even one with another --lock-file or --overwrite.
class RunDirHold {
 public:
  RunDirHold() = default;
  explicit RunDirHold(int fd) : fd_(fd) {}
  RunDirHold(RunDirHold&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RunDirHold& operator=(RunDirHold&& o) noexcept;
  RunDirHold(const RunDirHold&) = delete;
  RunDirHold& operator=(const RunDirHold&) = delete;
  ~RunDirHold();

 private:
  int fd_ = -1;
};

struct RunContext {
  std::unique_ptr<Device> device;
  RunDirHold dir_hold;  // the run folder's claim (ClaimRunDir)
  std::optional<MeasureLock> lock;
  LocalExecutor executor;
  RunRecord record;
  LegJournal journal;  // legs.jsonl: each finished leg, appended (record.json at start and end)
  LegConfig config;
  std::vector<Expectation> expectations;
  std::string dir;
  std::string name;  // "run", "baseline", ... for messages
  bool interrupted = false;
  bool keep_going = false;
  std::optional<long long> min_requests;  // RunFlags::min_requests
  double progress_every_s = 30;           // RunFlags::progress_every_s
  // planned_legs is an upper bound (a sequential A/B may decide early): the ETA says "at most".
  bool planned_is_max = false;
  // When the first leg was about to start and when the last one ended: the run's ETA.
  std::chrono::steady_clock::time_point started, last_leg_end;
  // The run stopped at a leg whose command failed (no --keep-going): why, for the summary.
  std::string stopped_on_failure;
  // Said once per run: a failing command's last stderr lines; a leg without its own metric.
  bool told_stderr = false, told_no_metric = false;
  // record.json was written at the start, and FinishRun has not written it at the end yet:
  // an exception that ends vouch in between writes it as failed, with that cause.
  bool record_open = false;
  // Keep only the last leg in memory: the others are in the journal (RunRecord::legs_journal),
  // and the summary keeps only their values. Set before PrepareRun.
  bool spill_legs = false;
  // Asked once, at the first leg whose command succeeded (with FirstLegProblem, leg_notes.h):
  // a non-empty answer stops the run there (a --headline the legs do not report): every
  // other leg would end the same way. Not with --keep-going.
  std::function<std::string(const LegRecord&)> first_leg_check;
  bool first_leg_checked = false;
  // With expectations: the measured legs' metrics and 1-based numbers, for CheckExpectations.
  std::vector<std::vector<Metric>> expect_metrics;
  std::vector<int> expect_numbers;
  RunContext() = default;
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;
  ~RunContext();
};

// Opens the device, checks the GPUs, runs the preflight, takes the lock, creates the run
// directory and writes the record's static parts. Returns -1 to go on, else an exit code.
int PrepareRun(const GlobalOptions& g, const RunFlags& f, std::vector<Arm> arms,
               const std::string& kind, const std::vector<std::string>& vouch_argv,
               RunContext* ctx);
// Runs one leg of ARM in ROLE, appends it to the record and to the journal. False when
// interrupted, when the leg could not start (the error is printed and recorded), or when its
// command failed (non-zero exit, signal, timeout) and --keep-going was not given: a broken
// command is reported at its first leg, not run N more times.
bool RunOneLeg(RunContext& ctx, const Arm& arm, const std::string& role);
// The run's time left, from the legs finished so far (their mean wall time, the time between
// legs included) and the planned legs left; nullopt before the first leg has ended.
std::optional<double> RunEtaSeconds(const RunContext& ctx,
                                    std::chrono::steady_clock::time_point now);
// The plain protocol of run, baseline and gate: WARMUP discarded legs, then REPS measured.
void RunWarmupAndMeasured(RunContext& ctx, const Arm& arm, int warmup, int reps);
// REPS more measured legs after the planned ones (a sequential gate's block, a baseline's
// second stage); false when a leg stopped the run.
bool RunMoreMeasured(RunContext& ctx, const Arm& arm, int reps);
// "vouch-KIND-YYYYMMDD-HHMMSS", the default evidence directory.
std::string DefaultRunDir(const std::string& kind);
// Makes DIR ready for a new run: an empty or absent directory is used as is. One that holds
// files is refused (a new run there would read the old legs' files and overwrite the old
// record) unless OVERWRITE, which removes an earlier vouch run there (its record.json and
// legs/) and refuses a directory that holds anything else. A DEFAULT directory that exists
// is never reused: "-2", "-3"... is appended (the folder is made with mkdir, which only one
// run can win). The folder exists on return and HOLD holds its claim: a folder that another
// live run holds is refused, with or without OVERWRITE. Returns the directory to use.
Result<std::string> ClaimRunDir(const std::string& dir, bool is_default, bool overwrite,
                                RunDirHold* hold);
// Checks expectations, writes the final record, prints the summary. Returns the exit code
// (0 when at least one measured leg is valid and nothing was violated; 1 when the run
// stopped at a failing leg).
int FinishRun(RunContext& ctx, bool print_summary = true);

// Parses "K=V" environment additions.
Result<std::vector<std::pair<std::string, std::string>>> ParseEnv(
    const std::vector<std::string>& kv);

}  // namespace vouch::cli
