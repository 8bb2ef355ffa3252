// Runs one leg of a run: its own window, its metrics, its validity. Shared by `vouch run`,
// `vouch baseline`, `vouch gate` and `vouch ab`, which differ only in the order of legs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clock/measure.h"
#include "metrics/expect.h"
#include "metrics/extract.h"
#include "metrics/summary.h"

namespace vouch {

// One side of a comparison, or the only command of a run.
struct Arm {
  std::string name = "run";
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;
  bool shell = false;
};

struct LegConfig {
  std::vector<MetricSpec> metrics;  // empty: the VOUCH_METRICS channel when the leg wrote one
  WindowOptions window;             // window.dir is the run directory; legs go below it
  double timeout_s = 0;
  bool tee = false;
  std::optional<std::uint64_t> output_cap_bytes;
  // --gpu-trace: the CUPTI tracer injected into the leg (CUDA_INJECTION64_PATH); empty: off.
  // Its files go into the leg's directory, its figures into the leg's metrics (gpu.*).
  std::string gpu_trace_lib;
};

struct LegRecord {
  int index = 0;              // position in the run
  std::string arm;            // arm name
  std::string role;           // "warmup" or "measured"
  std::string discard_cause;  // "warmup", or "" for a measured leg
  std::string dir;            // relative to the run directory
  LegResult result;
  std::optional<std::uint64_t> peak_device_mem_bytes;
  std::vector<Metric> metrics;  // including the built-in ones
  std::string metrics_error;
  WindowSummary window;
  std::vector<std::string> evidence_errors;
  bool valid = false;
  std::vector<std::string> reasons;  // why not valid
  // --gpu-trace: the leg's GPU trace folded over its measured region (gputrace/leg_trace.h's
  // vouch.gpu_trace object, with the clock window it was taken under); null when not traced.
  nlohmann::json gpu_trace;
};

nlohmann::json ToJson(const LegRecord& leg);

// The clock window a leg's figures were taken under (leg, arm, role, window verdict, SM clock),
// for a trace's or a per-kernel figure's attribution; AttributionLine renders it as one line,
// or "unattributed: no clock window" for a null object (an external trace, an ncu export).
nlohmann::json WindowAttribution(const LegRecord& leg);
std::string AttributionLine(const nlohmann::json& window);

using ProgressFn = std::function<void(const std::optional<Sample>& last, double elapsed_s)>;

// Runs ARM once as leg INDEX. An Error only when the leg could not be started; a leg that
// ran always gives a LegRecord, with its evidence on disk.
Result<LegRecord> RunLeg(Device& device, LegExecutor& executor, const LegConfig& config,
                         const std::string& run_dir, const Arm& arm, int index,
                         const std::string& role, const ProgressFn& progress);

// The built-in metrics every leg has: wall time, exit status, peak RSS of the process
// tree, peak device memory of the process tree, GPU busy fraction.
std::vector<Metric> BuiltinMetrics(const LegResult& r, std::optional<std::uint64_t> device_mem,
                                   const WindowSummary& w);

}  // namespace vouch
