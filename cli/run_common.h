// What `vouch run`, `baseline`, `gate` and `ab` share: the flags of a run, the preflight,
// the lock, the record written after every leg, the progress line and the final summary.
#pragma once

#include <memory>
#include <optional>

#include "common.h"
#include "lock/lock.h"
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
  std::optional<double> output_cap_mib;
  PolicyFlags policy;
  StoreFlag store;  // --store: the result goes into the history store too
  // WITH_REPS: add --warmup/--reps (baseline has --trials instead; ab has --pairs).
  void Add(CLI::App& app, bool with_reps);
};

struct RunContext {
  std::unique_ptr<Device> device;
  std::optional<MeasureLock> lock;
  LocalExecutor executor;
  RunRecord record;
  LegConfig config;
  std::vector<Expectation> expectations;
  std::string dir;
  std::string name;  // "run", "baseline", ... for messages
  bool interrupted = false;
};

// Opens the device, checks the GPUs, runs the preflight, takes the lock, creates the run
// directory and writes the record's static parts. Returns -1 to go on, else an exit code.
int PrepareRun(const GlobalOptions& g, const RunFlags& f, std::vector<Arm> arms,
               const std::string& kind, const std::vector<std::string>& vouch_argv,
               RunContext* ctx);
// Runs one leg of ARM in ROLE, appends it, rewrites the record. False when interrupted or
// when the leg could not start (the error is printed and recorded).
bool RunOneLeg(RunContext& ctx, const Arm& arm, const std::string& role);
// The plain protocol of run, baseline and gate: WARMUP discarded legs, then REPS measured.
void RunWarmupAndMeasured(RunContext& ctx, const Arm& arm, int warmup, int reps);
// "vouch-KIND-YYYYMMDD-HHMMSS", the default evidence directory.
std::string DefaultRunDir(const std::string& kind);
// Checks expectations, writes the final record, prints the summary. Returns the exit code
// (0 when at least one measured leg is valid and nothing was violated).
int FinishRun(RunContext& ctx, bool print_summary = true);

// Parses "K=V" environment additions.
Result<std::vector<std::pair<std::string, std::string>>> ParseEnv(
    const std::vector<std::string>& kv);

}  // namespace vouch::cli
