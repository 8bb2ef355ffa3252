// The pinned baseline a gate compares against: metrics with value, unit, direction and
// thresholds, plus the clock state it was taken at. The shape generalises the first seed's
// tests/perf_baseline.json (3 % decode fail, 5 % prefill warn, 10 % peak VRAM fail).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clock/clock_state.h"
#include "metrics/metric.h"
#include "util/median.h"
#include "util/result.h"

namespace vouch {

inline constexpr std::string_view kBaselineSchema = "vouch.baseline";
inline constexpr int kBaselineSchemaVersion = 1;

// Better, BetterName and ParseBetter come from metrics/metric.h (kNone is refused here).

struct BaselineMetric {
  std::string name;
  double value = 0;  // median over the cold trials
  std::string unit;
  Better better = Better::kHigher;
  // A change in the bad direction strictly beyond fail_pct fails, beyond warn_pct warns.
  // nullopt: no such threshold (a warn-only metric has no fail_pct).
  std::optional<double> fail_pct;
  std::optional<double> warn_pct;
  // When this environment variable is "1" the metric is skipped (shown as skipped). Empty: none.
  std::string skip_env;
  // Every trial's value, in trial order: the gate judges the noise from them. Empty in a file
  // written before vouch kept them (then the gate cannot judge noise and says so).
  std::vector<double> trials;
  // With one trial: the tool's own per-run values inside it (hyperfine times, Google
  // Benchmark repetitions, llama-bench samples), the within-process noise a gate of one value
  // a side uses. Empty otherwise.
  std::vector<double> samples;
  // The configuration that produced it (llama-bench: model, n_batch, ...); empty when the
  // source reports none. A gate refuses a run whose configuration differs.
  std::map<std::string, std::string> config;
};

struct Baseline {
  int schema_version = kBaselineSchemaVersion;
  std::string headline;         // name of the headline metric (one of metrics)
  std::string headline_reason;  // why it is the headline ("" in files from before the field)
  std::vector<BaselineMetric> metrics;
  ClockState clock;
  std::string record_path;  // the record the values came from
  int trials = 0;
  // The planned trials of a baseline grown by `baseline --max-trials` (Stein's first stage):
  // the gate takes the baseline's spread from these trials only (gate/noise.h), since how
  // many trials were added depended on their spread. 0: not grown (one stage).
  int first_stage_trials = 0;
  // The --max-trials it was pinned with when the growth rule ran (grown or not): a baseline that
  // could grow and kept its first trials did so because their spread looked small, and the gate
  // calibrates its levels on that rule (gate/gate_sequential.h). 0: it could not grow.
  int max_trials = 0;
  std::string created_utc;                  // ISO 8601, e.g. 2026-11-29T10:48:56Z
  std::vector<std::string> noise_warnings;  // BaselineNoiseWarnings when it was written
  // The --metric sources its trials were read with ("json:tok_s:tok/s:higher:/tok_s", ...): a
  // gate that runs a command reads its legs the same way unless given its own. Empty: none
  // given (the channel), or a file from before the field.
  std::vector<std::string> metric_sources;

  const BaselineMetric* Find(std::string_view name) const;
};

// One metric as measured over the cold trials; MakeBaseline takes the median of values.
struct BaselineInput {
  std::string name;
  std::string unit;
  Better better = Better::kHigher;
  std::vector<double> values;  // one per trial
  std::map<std::string, std::string> config = {};
  std::vector<double> samples = {};  // the tool's per-run values, kept with one trial
};

// A per-metric override of the default thresholds; unset fields keep the default.
struct ThresholdOverride {
  std::optional<double> fail_pct;
  std::optional<double> warn_pct;
  bool clear_fail = false;  // remove the default fail threshold (make it warn-only)
  bool clear_warn = false;
  std::optional<std::string> skip_env;
};

// Parses a command-line threshold, "NAME=fail:3,warn:1" (either part may be left out; "off"
// removes that threshold, e.g. "NAME=fail:off,warn:5"). NAME is everything before the last
// '=' (nvbench names hold '='). Errors name the spec and what is wrong.
Result<std::pair<std::string, ThresholdOverride>> ParseThresholdSpec(std::string_view spec);
// Parses every spec; a metric named twice is an error.
Result<std::map<std::string, ThresholdOverride>> ParseThresholdSpecs(
    const std::vector<std::string>& specs);

// Thresholds given when gating, applied over the baseline file's own.
struct ThresholdPolicy {
  // Every metric with a direction fails past this many percent in its bad direction (a
  // metric keeps a tighter fail threshold it already has). nullopt: only the file's.
  std::optional<double> fail_pct_all;
  std::map<std::string, ThresholdOverride> overrides;  // by metric name; win over the rest
};
// Applies POLICY to BASELINE's metrics. Errors: an override for a metric the baseline does
// not hold (named, with what it holds), a negative or non-finite threshold.
Status ApplyThresholdPolicy(Baseline* baseline, const ThresholdPolicy& policy);

struct BaselineOptions {
  double headline_fail_pct = 3.0;   // seed: decode worse than -3 % fails
  double secondary_warn_pct = 5.0;  // seed: prefill worse than -5 % warns, never fails
  double vram_fail_pct = 10.0;      // seed: peak VRAM up more than 10 % fails
  std::string vram_skip_env = "VOUCH_SKIP_VRAM";       // seed: IMP_VERIFY_SKIP_VRAM=1
  std::map<std::string, ThresholdOverride> overrides;  // by metric name
  std::optional<double> fail_pct_all;  // every metric fails past this (see ThresholdPolicy)
  std::string record_path;
  std::string created_utc;  // empty: now
};

// True for peak-memory metrics: the name holds "vram" or "device_mem", or it holds "peak"
// and the unit is a byte unit (bytes, B, KiB, MiB, GiB, MB, GB).
bool IsVramMetric(std::string_view name, std::string_view unit);

// Builds a baseline with default thresholds: the headline fails at headline_fail_pct,
// VRAM metrics fail at vram_fail_pct, every other metric warns at secondary_warn_pct.
// trials is the largest number of values any input has. Errors: no inputs, an empty or
// duplicate name, an input without values or with a non-finite value, a headline that names
// no input, an override for a metric that is not an input, a negative threshold.
Result<Baseline> MakeBaseline(const std::vector<BaselineInput>& inputs, const std::string& headline,
                              const ClockState& clock, const BaselineOptions& options = {});

// Warnings about the baseline's own noise, one per metric with a threshold whose trials
// cannot resolve it with a gate of GATE_LEGS legs: the spread, the log standard deviation and
// how many trials (and gate legs) would resolve it. A single trial is a warning too.
std::vector<std::string> BaselineNoiseWarnings(const Baseline& baseline, int gate_legs);

// Reads and validates a baseline file. Refuses malformed or truncated JSON, missing fields,
// wrong types, a wrong schema name and a newer schema_version, naming the file and field.
Result<Baseline> ReadBaseline(const std::string& path);
// Parses baseline JSON text; ORIGIN names the source in errors.
Result<Baseline> ParseBaseline(std::string_view json_text, const std::string& origin);
// Serialises to JSON text (2-space indent, trailing newline).
std::string BaselineToJson(const Baseline& baseline);
// Writes atomically (temporary file, then rename).
Status WriteBaseline(const std::string& path, const Baseline& baseline);

}  // namespace vouch
