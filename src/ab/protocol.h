// The A/B block protocol of `vouch ab`, without the binary: one discarded warm-up leg per
// arm (A then B), optional A/A calibration blocks (arm A against a copy named A'), measured
// ABBA/BAAB blocks in an orientation drawn from a seeded std::mt19937_64, the pairing rules
// for every pair, sequential looks, and the verdict from the paired statistics (src/stats),
// plain and clock-normalised. The legs themselves are run by a callback, so the protocol is
// pure: the same legs give the same outcome, and tests can fabricate them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clock/policy.h"
#include "record/leg_runner.h"
#include "stats/ab_stats.h"
#include "stats/sequential.h"
#include "util/result.h"

namespace vouch {

struct AbPlan {
  Arm a, b;
  int warmup = 1;                // discarded legs per arm, A then B
  int pairs = 8;                 // fixed design; rounded up to whole blocks
  std::optional<int> max_pairs;  // sequential mode: decide after each block, at most this many
  int calibrate = 0;             // A/A pairs first; their band replaces `band`
  NoiseBand band;                // the band when calibrate == 0
  double confidence = 0.95;
  bool allow_cross_boot = false;  // pair legs across boots (waives the boot id only)
  // Empty: the only user metric of the first leg that has one (or a known tool's headline).
  // The first leg of each arm is checked at once: a headline it cannot give ends the run.
  std::string headline;
  std::uint64_t seed = 0;  // of the block orientations
  Policy policy;           // the pairing rules' thresholds
};

// Blocks of two pairs: measured (of `pairs`, or of `max_pairs` in sequential mode) and A/A.
int AbMeasuredBlocks(const AbPlan& plan);
int AbCalibrationBlocks(const AbPlan& plan);
// Every leg the plan runs when nothing stops it early: warm-ups and four per block.
int AbPlannedLegs(const AbPlan& plan);

// What the runner gives back for one leg. `leg` is the leg as recorded (the protocol copies
// it at once; null when none was recorded); `stop` ends the protocol after it (interrupted,
// or the leg could not run or be recorded). A null leg always stops.
struct LegStep {
  const LegRecord* leg = nullptr;
  bool stop = false;
};
// Runs ARM once in ROLE ("warmup", "calibration" or "measured").
using LegRunner = std::function<LegStep(const Arm& arm, const std::string& role)>;
// Told of every sequential look: its number (1-based), the pairs judged so far and the step
// (nullopt when the look could not be evaluated).
using LookObserver = std::function<void(std::size_t look, std::size_t pairs,
                                        const std::optional<SequentialStep>& step)>;
// "look N after M pairs: VERDICT\n", the progress line of `vouch ab`.
std::string RenderLookLine(std::size_t look, std::size_t pairs,
                           const std::optional<SequentialStep>& step);

// One pair of legs: indices into AbOutcome::legs (the order they ran in), and when valid the
// headline values and the pacing SM clock means (the slowest busy GPU's).
struct AbPairResult {
  int a_leg = -1, b_leg = -1;
  bool valid = false;
  std::string reason;  // why not valid: "pair of legs 3 and 2: ..."
  double a = 0, b = 0, clock_a = 0, clock_b = 0;
};

// The mean over an arm's valid measured legs of the pacing SM clock median and mean.
struct ArmClock {
  double median_mhz = 0, mean_mhz = 0;
};

struct AbOutcome {
  enum class End {
    kCompleted,          // every block ran, or a sequential look stopped it
    kStopped,            // the runner stopped it; the verdict is on the pairs so far
    kCalibrationFailed,  // too few valid A/A pairs for a band: no verdict (error says why)
    kDesignFailed,       // the sequential design could not be built: no verdict
    // The first leg of an arm showed the verdict cannot have a headline (no --headline and
    // several user metrics, none at all, or a --headline the leg does not report): no
    // verdict, and no further leg was run (error says why, with the metric names it has).
    kHeadlineRefused,
  };
  End end = End::kCompleted;
  bool completed() const { return end == End::kCompleted; }
  bool has_verdict() const { return end == End::kCompleted || end == End::kStopped; }
  std::string error;

  std::vector<LegRecord> legs;            // every leg the runner returned, in order
  std::vector<std::string> orientations;  // "ABBA"/"BAAB" per block, calibration blocks first
  std::vector<AbPairResult> calibration;  // the A/A pairs (A' on the B side)
  std::vector<AbPairResult> pairs;        // the measured pairs
  std::string headline;                   // as given or detected ("" when none)
  std::string headline_reason;            // why it is the headline
  Better better = Better::kHigher;        // the headline's direction, from the last valid pair
  NoiseBand band;                         // given or calibrated
  bool sequential = false;
  std::size_t looks = 0;                    // sequential looks taken
  std::optional<SequentialStep> last_step;  // the last look
  std::size_t pairs_used = 0;               // valid measured pairs
  std::vector<std::string> refused;         // the reasons of the refused measured pairs
  AbComparison comparison;                  // fixed-sample, plain and clock-normalised
  AbDecision decision;  // the verdict quoted (the last look's in sequential mode)
  ArmClock clock_a, clock_b;
};

// Told after every measured block is judged, with the outcome so far (its pairs): a caller
// can keep the finished blocks on disk before the next leg (a fleet node that dies mid-run).
using BlockObserver = std::function<void(const AbOutcome& so_far)>;

AbOutcome RunAbProtocol(const AbPlan& plan, const LegRunner& run_leg,
                        const LookObserver& on_look = {}, const BlockObserver& on_block = {});

// What the reports need beyond the plan and the outcome.
struct AbReportContext {
  bool simulated = false;                 // the device is a replay
  std::vector<std::string> caveats;       // the run record's
  std::vector<std::string> a_env, b_env;  // the arms' own K=V, as given, for the arms line
};

// The verdict object stored in record.extra["verdict"] and printed by --json.
nlohmann::json AbVerdictJson(const AbPlan& plan, const AbOutcome& outcome,
                             const std::vector<std::string>& caveats);
// The verdict block printed by `vouch ab`.
std::string RenderAbText(const AbPlan& plan, const AbOutcome& outcome,
                         const AbReportContext& context);
// The measured pairs as JSON (legs, validity, reason, values, clocks) with the headline and
// its direction: what `vouch fleet` pools across nodes. In the verdict as "pairs", and in
// record.extra["blocks_so_far"] while the run goes on.
nlohmann::json AbPairsJson(const AbOutcome& outcome);
// The verdict as Markdown (--markdown), for a pull request.
std::string RenderAbMarkdown(const AbOutcome& outcome, const std::vector<std::string>& caveats);

}  // namespace vouch
