// The record: one directory per run, record.json plus per-leg evidence. record.json is
// written atomically when the run starts and when it ends; each finished leg is appended to
// the journal legs.jsonl in between (journal.h), so an interrupted or killed run keeps every
// finished leg and says what is missing, and a long run stays linear.
#pragma once

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clock/clock_state.h"
#include "metrics/summary.h"
#include "record/leg_runner.h"
#include "util/redact.h"  // IsSecretName, RedactArgv: the one redaction

namespace vouch {

class JsonSchema;

inline constexpr int kRecordSchemaVersion = 1;

// What a record's counts, summary and leg table need of the legs a long run no longer holds
// in memory (they are in its leg journal, journal.h): counts, the valid measured legs'
// values per arm and metric, and the widest arm name; a few bytes per leg, not the leg.
struct LegTally {
  int legs = 0, measured = 0, valid = 0;
  size_t arm_width = 0;
  std::map<std::string, MetricAccumulator> valid_metrics;  // by arm
  void Add(const LegRecord& leg);
};

struct RunRecord {
  std::string kind = "run";             // run | baseline | gate | ab
  std::vector<std::string> vouch_argv;  // as typed (secrets redacted), for the reproduce line
  // Variables of vouch's own environment that change what it does (CUDA_VISIBLE_DEVICES
  // chooses the GPUs), written before the command in the reproduce line.
  std::vector<std::pair<std::string, std::string>> reproduce_env;
  // vouch's global options that the run depended on (--sim FILE, --lock-file FILE), written
  // before the command's name, and the directory vouch ran in (the line starts "cd DIR &&").
  std::vector<std::string> global_argv;
  std::string cwd;
  std::vector<Arm> arms;
  // The legs held in memory. With legs_journal set, the first spilled.legs legs of the run
  // are not here but in that file (one line each, in order), and legs holds those after.
  std::vector<LegRecord> legs;
  std::string legs_journal;
  LegTally spilled;
  int planned_legs = 0;
  std::string status = "running";    // running | complete | interrupted | failed
  std::vector<std::string> missing;  // what an interrupted run lacks
  std::vector<std::string> caveats;
  Policy policy;
  nlohmann::json preflight, environment, revisions, artifacts, contention;
  std::vector<ExpectationViolation> violations;
  nlohmann::json extra = nlohmann::json::object();  // a/b verdict, gate table...
  double started_unix_s = 0, ended_unix_s = 0;
};

nlohmann::json CaptureEnvironment(Device& device, const std::vector<int>& gpus);
// The git commit, branch and dirty flag of CWD and of REPOS. Untracked files and folders that
// vouch wrote (run directories, OWN_PATHS such as this run's directory and lock file,
// baselines, vouch's Markdown) do not make a checkout dirty: they are listed in
// "vouch_output_ignored"; what does is in "dirty_paths" (20 at most of each).
nlohmann::json CaptureRevisions(const std::string& cwd, const std::vector<std::string>& repos,
                                const std::vector<std::string>& own_paths = {});
Result<nlohmann::json> HashArtifacts(const std::vector<std::string>& paths);
nlohmann::json CaptureContention(Device& device, const std::vector<int>& gpus);

// Per arm and metric, over the VALID measured legs only.
std::map<std::string, std::vector<MetricSummary>> SummariesByArm(const RunRecord& r);
nlohmann::json SummaryToJson(const std::map<std::string, std::vector<MetricSummary>>& by_arm);
// Every leg of the run, the spilled ones included.
inline int LegCount(const RunRecord& r) { return r.spilled.legs + static_cast<int>(r.legs.size()); }
// Moves every leg held in memory but the last into R.spilled: the caller has appended them
// to R.legs_journal already.
void SpillLegs(RunRecord& r);
// The record; its "legs" holds only the legs in memory (with the spilled ones, WriteRecord
// writes them all from the journal).
nlohmann::json ToJson(const RunRecord& r);
// DIR/record.json, atomically; the spilled legs are read back from the journal one at a time.
Status WriteRecord(const std::string& dir, const RunRecord& r);
// RenderRecordText(J) on OUT, J being ToJson(R): the spilled legs' lines read back from the
// journal one at a time.
void PrintRecordText(const RunRecord& r, const nlohmann::json& j, std::FILE* out);
// DumpJson(ToJson(R), 2) and a newline on OUT: with spilled legs, DIR/record.json as
// WriteRecord wrote it, copied.
void PrintRecordJson(const RunRecord& r, const std::string& dir, std::FILE* out);

// Reads DIR/record.json (or a record.json path); checks schema and version.
// Every field a reader of a record relies on is present with its type; the error names the
// first one that is not ("'legs[2].result.wall_ns' is missing").
// WHERE names the file in the error.
Status CheckRecordShape(const nlohmann::json& record, std::string_view where = "record");
// The record's schema name and version (every reader of a record: the file, the store).
Status CheckRecordHeader(const nlohmann::json& record, std::string_view where);
// Every field a reader of a record or of a leg.json relies on, with its type and range.
const JsonSchema& RecordSchema();
const JsonSchema& LegRecordSchema();
Result<nlohmann::json> ReadRecordJson(const std::string& path_or_dir);
// The same, of PATH, a record.json (or the file given in its place), without the stat that
// tells a run directory from its file.
Result<nlohmann::json> ReadRecordJsonFile(const std::string& path);
// Medians per metric of an arm's valid legs, from a record document.
// Recomputed from the legs (the evidence), never taken from the summary block on trust:
// a summary entry that disagrees with its legs, is duplicated, names a metric no valid leg
// has, or misses one they have, and a 'valid_legs' count or a leg marked valid against its
// window, are errors naming WHERE and the field. REC must have passed CheckRecordShape.
Result<std::map<std::string, std::pair<double, std::string>>> RecordMedians(
    const nlohmann::json& rec, const std::string& arm, std::string_view where = "record");
// The clock state of an arm's valid legs (median of medians, mean of means).
ClockState RecordClockState(const nlohmann::json& rec, const std::string& arm);
// The same of a record that passed CheckRecordShape, without building its windows again.
ClockState CheckedRecordClockState(const nlohmann::json& rec, const std::string& arm);
// Readable summary of a record (what `vouch run` prints at the end and `vouch show` prints).
std::string RenderRecordText(const nlohmann::json& rec);
// Its parts: everything before the legs' lines, one leg's line (ARM_WIDTH: the widest arm
// name of the legs, at least 6), and the summary; RenderRecordText is the three.
std::string RenderRecordHead(const nlohmann::json& rec);
std::string RenderLegLine(const nlohmann::json& leg, size_t arm_width);
std::string RenderRecordSummary(const nlohmann::json& rec);

}  // namespace vouch
