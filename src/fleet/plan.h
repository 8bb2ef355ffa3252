// A fleet run: what each Slurm array task runs, where its evidence goes, and what a resume
// still owes. Stored as DIR/fleet.json; the submitter writes it, the workers read it.
//
// Layout of DIR:
//   fleet.json                          this plan (rounds of submitted array jobs)
//   slurm/<job>_<task>.out              each task's Slurm log
//   nodes/<node>/<task-id>-a<attempt>/  one vouch record per task attempt, on that node
//     node.json                         who ran it (node, job, GPUs Slurm gave, exit status)
//     run/                              the vouch run directory (record.json, legs)
//     baseline.json                     (fleet baseline) the node's baseline
//   fleet-record.json                   the merged record (vouch fleet merge)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleet/slurm.h"
#include "util/result.h"

namespace vouch {

enum class FleetKind { kAb, kRun, kGate, kBaseline };
std::string_view FleetKindName(FleetKind k);  // "ab", "run", "gate", "baseline"
Result<FleetKind> ParseFleetKind(const std::string& s);

// One array task: whole ABBA blocks (ab) or one whole run (run, gate, baseline).
struct FleetTask {
  std::string id;          // "r0-t3": round 0, array index 3
  int blocks = 0;          // ab: measured ABBA blocks (2 pairs each); else 0
  std::uint64_t seed = 0;  // ab: the orientation seed of this task's blocks
  std::string covers;      // a resume task: the id of the task whose missing blocks it runs
};

struct FleetRound {
  std::string job_id;  // the array job sbatch printed (empty until submitted)
  double submitted_unix_s = 0;
  std::vector<FleetTask> tasks;  // array index = position
};

struct FleetPlan {
  FleetKind kind = FleetKind::kAb;
  std::vector<std::string> node_args;    // the node command's options (before --)
  std::vector<std::string> command;      // after --
  int nodes = 1;                         // as asked
  int pairs = 0;                         // ab: pairs in all (whole blocks)
  std::uint64_t seed = 0;                // ab: the seed the tasks' seeds are drawn from
  std::string baseline;                  // gate: the baseline file (or fleet baseline directory)
  std::string vouch_binary;              // what the jobs run
  std::vector<std::string> global_args;  // vouch's global options for the jobs (--sim, --lock-file)
  SlurmOptions slurm;
  std::vector<FleetRound> rounds;
};

// The blocks of PAIRS pairs (rounded up to whole blocks) over NODES tasks, as even as can be
// (the first ones get one more). An error when there are fewer blocks than nodes.
Result<std::vector<int>> SplitBlocks(int pairs, int nodes);
// Task seeds: SplitMix64 of the plan's seed and the task's place (distinct per task, reproducible).
std::uint64_t TaskSeed(std::uint64_t plan_seed, int round, int index);

nlohmann::json FleetPlanToJson(const FleetPlan& p);
Result<FleetPlan> FleetPlanFromJson(const nlohmann::json& j, const std::string& origin);
Result<FleetPlan> ReadFleetPlan(const std::string& dir);  // DIR/fleet.json
Status WriteFleetPlan(const std::string& dir, const FleetPlan& p);

// The task of array index INDEX in the round whose job is JOB_ID (the worker's lookup);
// an error naming the round and index when the plan has no such task.
Result<FleetTask> FindTask(const FleetPlan& p, const std::string& job_id, int index, int round);

// The value the plan's node options give FLAG ("--band 2" or "--band=2"; the last one, as
// CLI11 takes it), or nullopt when they do not give it.
std::optional<std::string> PlanNodeOption(const FleetPlan& p, std::string_view flag);
// What the plan asked of every node's A/B, which wins over what a node's record says: the
// noise band (log half width; nullopt when the nodes calibrate their own, --calibrate N), and
// the confidence. An error names a value the plan's options cannot mean.
struct PlanAbParameters {
  std::optional<double> band_log;
  double confidence = 0.95;
};
Result<PlanAbParameters> PlanAbParametersOf(const FleetPlan& p);

// A node name safe as one path component (Slurm node names are; hostile values are not).
bool SafeNodeName(const std::string& name);

}  // namespace vouch
