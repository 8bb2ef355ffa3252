// The merged record of `vouch fleet run`, `gate` and `baseline`: each node ran the whole
// command on its own GPUs. Per metric, the node is the stratum of the same random-effects
// pooling as the A/B (meta.h) over the log of each valid measured leg, and a node whose value
// disagrees with the others is named, with its GPUs. A gate fails when any node fails; the
// failing nodes and their GPUs are named. A fleet baseline is the run directory: each node's
// baseline.json, found for a later fleet gate by FleetBaselineFor.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleet/evidence.h"
#include "fleet/merge.h"
#include "fleet/meta.h"
#include "gate/gate.h"

namespace vouch {

// A node is named as disagreeing only beyond this distance from the others (and significant):
// there is no noise band for a single run, so the A/B default band is used.
inline constexpr double kFleetRunBandPct = 1.0;

struct FleetRunNode {
  std::string node;
  std::string attempt;  // directory used
  std::string status;   // the record's
  std::vector<std::string> gpus;
  std::map<std::string, std::vector<double>> values;  // metric -> valid measured legs
  std::map<std::string, double> medians;
  std::optional<GateReport> gate;  // gate only
  std::string baseline;            // gate: the baseline it was gated against; baseline: written
};

struct FleetMetricSpread {
  std::string name, unit, better;
  std::optional<MetaResult> pooled;  // over log values; exp() is the fleet's geometric mean
  std::vector<NodeOutlier> outliers;
  std::vector<std::string> disagreeing;
};

struct FleetRunsMerge {
  FleetKind kind = FleetKind::kRun;
  std::vector<FleetRunNode> nodes;
  std::vector<FleetMetricSpread> metrics;
  std::vector<std::string> failing;  // gate: nodes whose gate failed (with GPUs in the text)
  std::vector<FleetGap> gaps;
  std::vector<std::string> problems;
  std::vector<std::string> refusals;  // FleetEvidence::refusals: nothing is pooled, exit 1
  int exit_code = 0;                  // 0 every node done (and, for a gate, none failed); else 1
};

FleetRunsMerge MergeFleetRuns(const FleetEvidence& ev, double confidence = 0.95);
nlohmann::json FleetRunsJson(const FleetEvidence& ev, const FleetRunsMerge& m);
std::string RenderFleetRunsText(const FleetRunsMerge& m);

// The baseline a node is gated against: PATH itself when it is a file; when it is a fleet
// baseline directory, the baseline.json NODE wrote there (an error naming the nodes that have
// one when NODE has none).
Result<std::string> FleetBaselineFor(const std::string& path, const std::string& node);

}  // namespace vouch
