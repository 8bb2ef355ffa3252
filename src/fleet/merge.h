// The fleet's merged record: one verdict from the per-node evidence with the node as a
// stratum (meta.h says which method and why), each node's own verdict beside it, the nodes
// that disagree named, and what is missing and why. Pure over FleetEvidence.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleet/evidence.h"
#include "fleet/meta.h"
#include "stats/ab_stats.h"

namespace vouch {

// A difference of logs as a percentage change: 100 (e^d - 1).
inline double LogPct(double log) { return 100 * (std::exp(log) - 1); }

// What a root task (a task of round 0) still owes, and why it is owed.
struct FleetGap {
  std::string task_id;                      // the root task
  int planned_blocks = 0, done_blocks = 0;  // ab; run/gate/baseline: 1 and 0 or 1
  std::string why;                          // Slurm's state, the node's record, ...
};

// Blocks done per root task (ab: whole blocks in the best attempt of every task covering it;
// others: 1 when an attempt completed) and the gaps. Used by merge and by --resume.
std::vector<FleetGap> FleetGaps(const FleetEvidence& ev);

// One node of an A/B.
struct FleetAbNode {
  std::string node;
  std::vector<std::string> attempts;  // attempt directories used
  std::vector<std::string> gpus;      // GPU UUIDs the node's records sampled
  std::vector<std::string> boot_ids;
  std::vector<double> d, d_clock;    // valid pairs' oriented log ratios (and clock-normalised)
  std::vector<double> a, b;          // the valid pairs' headline values, per arm
  std::vector<std::string> refused;  // the node's refused pairs
  AbDecision decision;               // the node's own verdict on its pairs
  std::optional<Stratum> stratum;    // nullopt below 2 valid pairs (not pooled)
  double band_log = 0;
};

struct FleetAbMerge {
  std::string headline, better;
  double band_log = 0;  // the widest node band (all equal when given)
  double confidence = 0.95;
  std::vector<FleetAbNode> nodes;
  std::optional<MetaResult> pooled, pooled_clock;
  std::optional<MetaResult> pooled_without_disagreeing;  // for the reader; not the verdict
  AbVerdict verdict = AbVerdict::kRefused;
  std::vector<std::string> reasons;  // why the verdict is what it is (refusals, one node)
  std::vector<NodeOutlier> outlier_tests;
  std::vector<std::string> disagreeing;  // named nodes
  std::vector<std::string> notes;        // heterogeneity said in words
  std::vector<FleetGap> gaps;
  std::vector<std::string> problems;  // unreadable subtrees, mixed headlines, ...
  std::size_t pairs_used = 0;
  // The smallest effect the verdict could see (issue 23 item 2), on `no change` and
  // `inconclusive`: the band plus the pooled interval's half width (one node: its own).
  std::optional<double> mde_pct;
  // Modes across process spawns (stats/modes.h), per node and arm: the fleet refuses a verdict
  // over them unless the nodes ran with --allow-modes (the plan's node options).
  std::vector<std::string> modes;
};

FleetAbMerge MergeFleetAb(const FleetEvidence& ev, double confidence = 0.95);
nlohmann::json FleetAbJson(const FleetEvidence& ev, const FleetAbMerge& m);
std::string RenderFleetAbText(const FleetAbMerge& m);

// The Slurm facts of every task the plan submitted, for the record.
nlohmann::json FleetJobsJson(const FleetEvidence& ev);

}  // namespace vouch
