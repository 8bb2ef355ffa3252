// What a fleet run directory holds: each task attempt's node, its vouch record and what Slurm
// says of its job. Read once, validated, never trusted blindly (a node subtree is written by
// a job on another machine): a file that is missing or malformed becomes a named problem of
// that task, never a crash or a silent zero.
#pragma once

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleet/plan.h"
#include "fleet/slurm.h"

namespace vouch {

// One attempt of one task (a requeued task runs again, as attempt 1, 2, ...).
struct FleetAttempt {
  std::string node;     // the subtree it is in (nodes/<node>/)
  std::string task_id;  // "r0-t3"
  int attempt = 0;
  std::string dir;                       // the attempt's directory
  nlohmann::json node_info;              // node.json (null when absent)
  std::optional<nlohmann::json> record;  // record.json (an A/B's: SlimAbRecord's fields)
  std::string problem;                   // why node.json or record.json could not be read
  // ab: the measured pairs, formed again from the record's legs (fleet/ab_pairs.h); where the
  // pairs the record lists (extra.verdict.pairs, else extra.blocks_so_far.pairs) disagree with
  // them, EDITS says how.
  nlohmann::json pairs = nlohmann::json::array();
  std::vector<std::string> edits;
  std::string headline, better;
  std::optional<double> band_log;
  std::string status() const;  // node.json's status, else the record's, else "unknown"
};

struct FleetEvidence {
  std::string dir;
  FleetPlan plan;
  std::vector<FleetAttempt> attempts;      // every attempt found, by node then task
  std::map<std::string, SlurmTask> slurm;  // "<job>_<task>" -> what Slurm said
  std::vector<std::string> problems;       // subtrees that are not attempts
  // Evidence that is not what it claims, each naming the folders: a symbolic link among the
  // node folders or an attempt's files, a node.json naming another node (or task), two
  // attempts holding the same record or the same legs (one node's evidence copied under a
  // second). Any of these refuses the merged verdict.
  std::vector<std::string> refusals;
  // "<job>_<task>" -> the last lines of that task's Slurm log (DIR/slurm/<job>_<task>.out)
  // that vouch wrote ("vouch ..."): why a worker stopped before it had a record (a
  // preflight that refused a GPU busy with another job, a missing baseline, ...).
  std::map<std::string, std::vector<std::string>> log_tails;
};

// An A/B attempt's record once its pairs are formed keeps only what the merge reads after
// (256 whole records held at once cost more in page faults than in parsing): these fields,
// and of each leg its window's kAbLegWindowKept, host.boot_id and gpus[].static.uuid
// (CheckIdentity's). A reader of FleetAttempt::record in an A/B finds nothing else there;
// evidence_test.cc checks that each kept field is the record's own.
inline constexpr std::array<const char*, 5> kAbRecordKept = {"status", "caveats", "environment",
                                                             "writer", "started_unix_s"};
inline constexpr std::array<const char*, 2> kAbLegWindowKept = {"started_unix_s", "ended_unix_s"};
// REC cut down to the above, its fields moved, not copied.
void SlimAbRecord(nlohmann::json& rec);

// Reads DIR (fleet.json, nodes/*/*) and SLURM (may be empty: Slurm is not asked). FAST: an
// A/B attempt whose evidence is in order is read without a tree of its record
// (fleet/attempt_fast.h); false reads every attempt the ordinary way (the tests compare them).
Result<FleetEvidence> ReadFleetEvidence(const std::string& dir, const std::vector<SlurmTask>& slurm,
                                        bool fast = true);

// The attempts of each task id, in EV's order (node, then attempt directory).
std::unordered_map<std::string, std::vector<const FleetAttempt*>> AttemptsByTask(
    const FleetEvidence& ev);

// "r0-t3-a1" -> {"r0-t3", 1}; nullopt for anything else.
std::optional<std::pair<std::string, int>> ParseAttemptDir(const std::string& name);
// The task id of array index INDEX in round ROUND.
std::string TaskId(int round, int index);

}  // namespace vouch
