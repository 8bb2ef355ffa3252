// Starting a leg, in two steps: everything the child needs is prepared first (the working
// directory checked, the environment, the program found, the output files and pipes opened),
// so that every error a user can fix is found before a process exists; then the child is
// started and its report read. Internal to src/leg (local_executor.cc, running_leg.cc).
#pragma once

#include <sys/types.h>  // pid_t
#include <unistd.h>     // close

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "leg/executor.h"
#include "leg/spawn.h"  // ChildReport
#include "util/result.h"

namespace vouch::leg_detail {

inline std::int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline std::int64_t UnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Closes a file descriptor when the scope ends (error paths before the pumps own them).
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

// What the child is given, every string ready before it starts. The char* vectors point into
// the string vectors: a plan is filled in place and never copied.
struct LaunchPlan {
  std::string path_value;  // the PATH of the leg's environment, where argv[0] is looked up
  std::string marker;      // "VOUCH_LEG_ID=..." (ProcTree finds the leg's processes by it)
  std::string program;     // argv[0], resolved to an absolute path
  std::vector<std::string> argv_strings, env_strings;
  std::vector<char*> argvp, envp;  // null-terminated, for execve
  Fd out_file, err_file;           // the output files (-1: not kept)
  Fd out_r, out_w, err_r, err_w;   // the stdout and stderr pipes (read ends non-blocking)

  LaunchPlan() = default;
  LaunchPlan(const LaunchPlan&) = delete;
  LaunchPlan& operator=(const LaunchPlan&) = delete;
};

// Fills PLAN for SPEC, whose argv as executed (after any shell wrapping) is ARGV. The first
// error found, naming LABEL: a missing working directory, a bad variable name, no such
// program, an output file that cannot be written, no pipe.
Status PrepareLaunch(const LegSpec& spec, const std::string& label,
                     const std::vector<std::string>& argv, LaunchPlan* plan);

struct StartedLeg {
  pid_t pid = 0;       // the main process, leader of its own process group
  ChildReport report;  // its high-water mark just before execve
  std::int64_t start_steady_ns = 0;
};

// Starts PLAN's child (signals blocked across the clone, the leg guard started) and waits for
// its exec. Sets RESULT's start_unix_ns. An error when the child could not be started, or could
// not enter its working directory or exec (the child is then reaped).
Result<StartedLeg> StartLegProcess(LaunchPlan* plan, const LegSpec& spec, const std::string& label,
                                   LegResult* result);

}  // namespace vouch::leg_detail
