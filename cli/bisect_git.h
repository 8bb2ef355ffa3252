// What `vouch bisect` asks of git and of the build: the range in first-parent order, a
// worktree per commit, the user's build command in it. Every process runs through the leg
// executor (its own process group, stopped on Ctrl-C), its output kept in a file.
#pragma once

#include <string>
#include <vector>

#include "bisect/record.h"
#include "util/result.h"

namespace vouch::cli {

struct Captured {
  bool ok = false;           // exited 0
  bool interrupted = false;  // vouch got Ctrl-C (or another terminating signal)
  std::string described;     // "exited with status 2"
  std::string out;           // stdout (at most 16 MiB)
  double seconds = 0;
};

// Runs ARGV (or, with SHELL, /bin/sh -c ARGV[0]) in CWD, stdout to LOG_PATH (or a scratch
// file in SCRATCH_DIR when empty) with stderr beside it. An Error only when it could not start.
Result<Captured> RunCaptured(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::string& scratch_dir, const std::string& log_path = "",
                             bool shell = false);

// The repository's top level from any folder in it.
Result<std::string> GitTopLevel(const std::string& dir, const std::string& scratch);
// REV as a full commit hash.
Result<std::string> GitCommit(const std::string& repo, const std::string& rev,
                              const std::string& scratch);
// GOOD, then every commit of BAD's first-parent history after it, BAD last. Refused unless
// GOOD is on BAD's first-parent history.
Result<std::vector<bisect::CommitInfo>> GitRange(const std::string& repo, const std::string& good,
                                                 const std::string& bad,
                                                 const std::string& scratch);
// A detached worktree of SHA at DIR (one left there by an interrupted bisect is replaced).
Status AddWorktree(const std::string& repo, const std::string& dir, const std::string& sha,
                   const std::string& scratch);
void RemoveWorktree(const std::string& repo, const std::string& dir, const std::string& scratch);

}  // namespace vouch::cli
