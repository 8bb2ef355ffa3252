// The gate: a run's metrics against a pinned baseline, per metric thresholds, and the clock
// caveat that says whether the comparison is clock-attributed. Pure: the environment is
// injected (skip variables), nothing is read or printed here.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/baseline.h"
#include "gate/gate_sequential.h"
#include "gate/noise.h"

namespace vouch {

// A metric the current run produced.
struct CurrentMetric {
  double value = 0;  // the median over the run's valid legs
  std::string unit;
  std::vector<double> values = {};  // one per valid leg: the gate judges noise from them
  std::map<std::string, std::string> config = {};  // see Metric::config
  std::vector<double> samples = {};  // with one leg: the tool's per-run values inside it
};

// Looks up an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (getenv).
EnvLookup ProcessEnv();

// kInconclusive: the noise cannot tell whether the change is beyond the fail threshold.
enum class GateVerdict { kPass, kWarn, kFail, kSkipped, kMissing, kError, kInconclusive };
// "pass" "warn" "fail" "skipped" "missing" "error" "inconclusive"
std::string_view GateVerdictName(GateVerdict v);

struct GateRow {
  std::string metric;
  std::string unit;  // the baseline's unit
  Better better = Better::kHigher;
  std::optional<double> fail_pct;  // copied from the baseline, for machine readers
  std::optional<double> warn_pct;
  std::optional<double> fail_count;  // a count metric's count threshold (gate/gate_count.h)
  double baseline = 0;
  std::optional<double> now;  // nullopt when the run lacks the metric
  // Signed plain change (now - baseline) / |baseline| in percent: latency up 4 % is +4.
  std::optional<double> change_pct;
  // The same change, positive when worse (a higher-is-better metric down 4 % is +4).
  std::optional<double> change_in_bad_direction_pct;
  // A count metric's plain change now - baseline (failed requests 0 -> 2 is +2): a count from
  // 0 has no percentage change and is decided on this (gate/gate_count.h).
  std::optional<double> change_count;
  // now / baseline of the plain values, and how it reads ("now/baseline time 1.1070 (now
  // slower)"): a ratio is never printed without saying which way it reads.
  std::optional<double> ratio;
  std::string ratio_reads;
  // The noise: the interval of the change from the baseline's trials and the run's legs
  // (gate/noise.h); nullopt when it cannot be judged (noise_note says why).
  std::optional<ChangeInterval> interval;
  std::string noise_note;
  size_t trials = 0, legs = 0;  // values on each side
  std::string threshold;        // "fail < -3.0%", "warn > +5.0%", "fail > +10.0%, warn > +5.0%"
  GateVerdict verdict = GateVerdict::kPass;
  std::string note;  // why skipped, missing or error; empty otherwise
  // The smallest change in the bad direction this row could have failed (warned, for a
  // warn-only metric), from the interval obtained: the threshold plus the interval's half
  // width, in percent. Set on pass and inconclusive rows that have an interval.
  std::optional<double> mde_pct;
};

struct GateCaveat {
  std::string code;  // "clock_differs", "clock_unattributed"
  std::string message;
};

struct GateReport {
  std::string headline;         // the baseline's headline metric
  std::string headline_reason;  // why it is the headline (from the baseline)
  std::vector<GateRow> rows;    // in the baseline's metric order
  std::vector<GateCaveat> caveats;
  bool clock_attributed = true;  // false when any clock caveat applies
  bool simulated = false;        // the baseline or the run came from a simulated device
  // fail if any row fails, is missing or is an error; else inconclusive if any row is; else
  // warn or pass.
  GateVerdict overall = GateVerdict::kPass;
  double alpha_per_metric = kGateFalseFailRate;  // one-sided, Bonferroni over failing metrics
  std::vector<std::string> not_in_baseline;      // metrics the run produced that are not gated
  std::optional<GateLook> sequential;            // set by a sequential gate (--max-reps)
};

// Percentage points of slack at the threshold, so that exactly 3.00 % (computed as
// 3.0000000000000027 in floating point) is "not beyond 3 %".
inline constexpr double kThresholdSlackPct = 1e-9;
// Clock medians or means further apart than this (percent) make the comparison unattributed.
inline constexpr double kClockOffsetPct = 1.0;

// A change in the bad direction strictly beyond fail_pct fails; strictly beyond warn_pct
// warns. With the noise known (gate/noise.h) "beyond" means the whole interval is beyond it;
// an interval across the fail threshold is inconclusive. With one value a side, the tool's own
// per-run values inside each (Metric::samples) are the noise when both sides have them; with
// none, a metric that can fail is inconclusive (never a FAIL or a pass on one value a side).
// Without trials (a baseline from before vouch kept them) the medians are compared and the row
// says noise was not judged.
// Two figures of different configurations (llama-bench n_batch 256 and 512) are an error row
// naming every property that differs. A metric whose skip_env is "1" is skipped (even if absent). A
// metric the run lacks is missing (fails the gate). A count metric (failed requests) whose
// baseline is 0 is compared as a count (gate/gate_count.h): 0 -> 0 passes, an increase warns,
// one beyond its fail_count fails. A unit mismatch, a baseline of 0 of any other metric or a
// non-finite value is an error row (fails the gate): no comparison is made.
GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env);
// The same at one look of a sequential gate: every interval at LOOK.nominal_alpha (one-sided,
// per metric) rather than the fixed design's level; the report keeps LOOK.
GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env,
                             const std::optional<GateLook>& look);
// Thresholds given when gating that a baseline file does not hold.
struct GateOptions {
  // A count metric (gate/gate_count.h: failed requests) whose increase is beyond this many
  // fails (`vouch gate --fail-count N`); nullopt: a count pinned at 0 only warns on increase.
  std::optional<double> fail_count;
};
GateReport CompareToBaseline(const Baseline& baseline,
                             const std::map<std::string, CurrentMetric>& current,
                             const ClockState& current_clock, const EnvLookup& env,
                             const std::optional<GateLook>& look, const GateOptions& options);
// The one-sided per-metric level of the fixed design: kGateFalseFailRate over the metrics
// that can fail (those with a fail threshold that are not skipped).
double GateAlphaPerMetric(const Baseline& baseline, const EnvLookup& env);
// True when some row is inconclusive: a sequential gate runs another block.
bool GateUndecided(const GateReport& report);

// The clock caveats alone (also used by CompareToBaseline).
std::vector<GateCaveat> ClockCaveats(const ClockState& baseline, const ClockState& now);

// Renderers over one report.
std::string RenderGateText(const GateReport& report);  // aligned columns
// A pull request comment of at most MAX_CHARS (GitHub refuses one over 65,536): failing,
// inconclusive and warning rows first, the largest bad change first; when all of it does not
// fit, the passing rows are folded (<details>) and what still does not fit is counted and
// said to be in FULL_PATH (or in `vouch gate --json` when none is given).
inline constexpr std::size_t kPullRequestCommentChars = 65536;
std::string RenderGateMarkdown(const GateReport& report,
                               std::size_t max_chars = kPullRequestCommentChars,
                               const std::string& full_path = "");
std::string RenderGateJson(const GateReport& report);  // schema "vouch.gate", version 1

// 0 for pass or warn, 1 for fail, 2 for inconclusive.
inline constexpr int kGateExitInconclusive = 2;
int GateExitCode(const GateReport& report);

}  // namespace vouch
