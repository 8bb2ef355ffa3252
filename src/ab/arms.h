// "Two arms must be two arms" (the `vouch arms` check, also run before `vouch ab`).
// After the second seed: a pair that measured one artifact twice was nearly reported as a
// refutation; the tell was an identical call count, not the times. A different sha256 does
// not prove two builds differ either (build-tree RPATH, __FILE__ embed the build or source
// root), so a verdict needs a control that moved:
//  - a behavioural control (a value the arms computed) catches a stale binary;
//  - a source control (the hash of the file the change lives in) catches one source twice.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gputrace/call_stat.h"
#include "util/result.h"

namespace vouch {

// A source file whose hash is compared between the arms (paired by name).
struct SourceControl {
  std::string name;  // e.g. "conv.cu"
  std::string path;  // this arm's copy
};

struct ArmInput {
  std::string label;                   // "A", "B"
  std::vector<std::string> artifacts;  // files or directories, paired by position
  std::vector<std::string> roots;      // this arm's build/source roots, searched in its artifacts
  // Behavioural controls: name -> value the arm computed. Compared as numbers when both
  // parse as numbers ("1414" == "1414.0"), else as strings.
  std::map<std::string, std::string> behavioural;
  std::vector<SourceControl> sources;
  std::map<std::string, CallStat> call_stats;  // name -> calls and time (optional)
};

enum class ArmsSeverity { kFatal, kRefuse, kWarn, kInfo };
std::string_view ArmsSeverityName(ArmsSeverity s);  // "fatal" "refuse" "warn" "info"

struct ArmsFinding {
  ArmsSeverity severity = ArmsSeverity::kInfo;
  // "same_artifact", "hash_only", "artifact_count", "control_equal", "control_moved",
  // "control_unpaired", "source_equal", "source_moved", "identity", "equal_calls",
  // "embedded_root", "hashes_differ", "same_binary", "no_control_moved"
  std::string code;
  std::string message;
};

struct ArtifactHash {
  std::string path;
  std::string sha256;
};

// Where an arm's artifact embeds one of its roots.
struct EmbeddedRoot {
  std::string arm;
  std::string artifact;  // the artifact as given
  std::string file;      // the file holding it (the artifact itself, or a file inside a directory)
  std::string root;
  std::uint64_t offset = 0;  // byte offset of the first occurrence in file
  std::uint64_t count = 0;   // occurrences in file
};

struct ArmsReport {
  std::vector<ArtifactHash> hashes_a, hashes_b;
  std::vector<EmbeddedRoot> embedded_roots;
  std::vector<ArmsFinding> findings;  // in order of severity, fatal first
  int controls_moved = 0;             // behavioural and source controls that differ
  bool distinct = false;              // no fatal and no refuse finding
};

// Runs every rule. Errors (not findings) for inputs that cannot be read: a missing artifact or
// source control file, an empty or "/" root. Artifacts are streamed, never loaded whole.
Result<ArmsReport> CheckArms(const ArmInput& a, const ArmInput& b);

// Streams FILE looking for NEEDLE; the first offset and the count, or nullopt when absent.
struct Occurrences {
  std::uint64_t first_offset = 0;
  std::uint64_t count = 0;
};
Result<std::optional<Occurrences>> FindInFile(const std::string& file, const std::string& needle);

std::string RenderArmsText(const ArmsReport& report);
std::string RenderArmsJson(const ArmsReport& report);  // schema "vouch.arms", version 1

}  // namespace vouch
