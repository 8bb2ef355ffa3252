// `vouch ab` without --artifact: the arms' commands hashed by themselves, so two byte-identical
// arms are caught as `--artifact` catches them, and a same-binary A/B says so.
// An arm's command files are its executable (argv[0] found through PATH, or relative to the
// arm's working directory) and, when that is an interpreter (python, bash, perl, node, ...),
// its script: the first argument that is not an option and names an existing file
// (`python -m mod` and `python -c code` run no script file).
#pragma once

#include <string>
#include <vector>

#include "ab/arms.h"
#include "record/leg_runner.h"
#include "util/result.h"

namespace vouch {

struct CommandFiles {
  std::string executable;               // resolved path ("" when not found)
  std::vector<std::string> scripts;     // resolved paths
  std::vector<std::size_t> file_words;  // indices in argv of the words naming those files
  std::string note;                     // why nothing was resolved (a shell arm, not found)
};

// PATH_ENV: the PATH the command runs with; CWD: its working directory ("" = vouch's).
CommandFiles ResolveCommandFiles(const std::vector<std::string>& argv, const std::string& path_env,
                                 const std::string& cwd);

struct CommandArmsReport {
  CommandFiles a, b;
  std::vector<ArtifactHash> hashes_a, hashes_b;  // executable first, then scripts
  std::vector<ArmsFinding> findings;             // fatal "same_artifact", info "same_binary", ...
  bool fatal = false;
};

// Errors only for a file that resolves but cannot be read.
Result<CommandArmsReport> CheckCommandArms(const Arm& a, const Arm& b);
std::string RenderCommandArmsJson(const CommandArmsReport& r);

}  // namespace vouch
