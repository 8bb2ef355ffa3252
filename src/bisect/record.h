// The record of `vouch bisect` (bisect.json): the range, the plan and every step with its
// verdict and evidence, written after each step so that an interrupted bisect resumes from
// it (Replay feeds the steps to a fresh Search, which refuses a record that does not replay).
// Its conclusion, text and Markdown summary are pure functions of the record and the search.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bisect/search.h"
#include "util/result.h"

namespace vouch::bisect {

inline constexpr const char* kBisectSchema = "vouch.bisect/1";

struct CommitInfo {
  std::string sha;      // full hash
  std::string subject;  // first line of its message
};

struct BisectStep {
  std::string kind;  // "confirm" (the bad end against the good) or "step"
  std::size_t index = 0;
  std::string commit;  // sha, for a reader and to check a replay
  StepVerdict verdict = StepVerdict::kUndecided;
  std::string reason;  // why this verdict, in words
  // The A/B's figures (verdict, ratio and interval, pairs, band, level), the step's run
  // folder, the build and, with --gpu-trace, the kernel comparison.
  nlohmann::json evidence = nlohmann::json::object();
};

struct BisectRecord {
  std::string repo;  // the repository's top level
  std::string good_rev, bad_rev;
  std::vector<CommitInfo> commits;  // first-parent order, the good end first, the bad end last
  std::vector<std::string> bench;   // the benchmark's argv
  std::string build;                // the build command ("" none)
  double alpha = 0.05;
  std::size_t max_pairs = 96;
  double min_effect_pct = 1;
  std::vector<BisectStep> steps;
  std::string status = "running";  // "running", "interrupted", "complete"
};

// The fields that must agree for a record to be resumed by a new invocation: "" when they
// do, else which one differs ("--bad differs: the record has v2, given v3").
std::string ResumeMismatch(const BisectRecord& recorded, const BisectRecord& asked);

// Feeds the record's steps, in order, to a fresh Search. An error names the step that does
// not replay (a record edited by hand, or from another range).
Result<Search> Replay(const BisectRecord& record);

// The record with the plan's family, the search's state and its conclusion.
nlohmann::json BisectJson(const BisectRecord& record, const Search& search, const FamilyPlan& plan);
// WHERE names the file in errors. Checks every field it reads.
Result<BisectRecord> BisectRecordFromJson(const nlohmann::json& j, const std::string& where);

// One sentence: "first bad commit: 1a2b3c4d5e6f (slow path)", "undecided at ...: the first
// bad commit is one of 9 commits, 1a2b..3c4d", ...
std::string Conclusion(const BisectRecord& record, const Search& search);
// The steps and the conclusion for a terminal, and as Markdown for an issue tracker.
std::string RenderBisectText(const BisectRecord& record, const Search& search,
                             const FamilyPlan& plan);
std::string RenderBisectMarkdown(const BisectRecord& record, const Search& search,
                                 const FamilyPlan& plan);

}  // namespace vouch::bisect
