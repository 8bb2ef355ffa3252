// LocalExecutor: a leg started (a vfork-like clone and exec into a new process group that dies
// with vouch: launch.h), watched until its main process exits, its leftovers ended and its
// output drained (running_leg.h).
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "leg/executor.h"
#include "leg/guard.h"
#include "leg/launch.h"
#include "leg/running_leg.h"
#include "util/strings.h"

namespace vouch {
namespace {

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[4096];
  if (::getcwd(buf, sizeof buf) == nullptr) return path;
  return std::string(buf) + "/" + path;
}

}  // namespace

Result<std::string> ResolveProgram(const std::string& program, const std::string& path_value,
                                   const std::string& cwd, const std::string& label) {
  auto check = [&](const std::string& candidate, bool* exists) -> bool {
    struct stat st {};
    *exists = ::stat(candidate.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
    return *exists && S_ISREG(st.st_mode) &&
           ::faccessat(AT_FDCWD, candidate.c_str(), X_OK, AT_EACCESS) == 0;
  };
  if (program.empty()) return MakeError("no program to run ({}): the command is empty", label);
  if (program.find('/') != std::string::npos) {
    std::string candidate = program;
    if (program[0] != '/' && !cwd.empty()) candidate = cwd + "/" + program;
    candidate = AbsolutePath(candidate);
    bool exists = false;
    if (check(candidate, &exists)) return candidate;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return MakeError("program '{}' is a directory ({}): {}", program, label, candidate);
    }
    if (exists) {
      return MakeError("program '{}' is not executable ({}): {}; run chmod +x on it", program,
                       label, candidate);
    }
    return MakeError("no such program '{}' ({}): {} does not exist", program, label, candidate);
  }
  std::string found_not_executable;
  for (const std::string& dir : Split(path_value, ':')) {
    std::string base = dir.empty() ? "." : dir;
    if (base[0] != '/' && !cwd.empty()) base = cwd + "/" + base;
    const std::string candidate = AbsolutePath(base + "/" + program);
    bool exists = false;
    if (check(candidate, &exists)) return candidate;
    if (exists && found_not_executable.empty()) found_not_executable = candidate;
  }
  if (!found_not_executable.empty()) {
    return MakeError("program '{}' is not executable ({}): {}; run chmod +x on it", program, label,
                     found_not_executable);
  }
  return MakeError(
      "no such program '{}' ({}): not found in PATH={}; check the spelling or give a path", program,
      label, path_value);
}

LocalExecutor::LocalExecutor(LocalExecutorOptions options) : options_(options) {
  if (options_.subreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

Result<LegResult> LocalExecutor::Run(const LegSpec& spec, LegObserver* observer) {
  const std::string label = spec.label.empty() ? "leg" : spec.label;
  if (spec.argv.empty() || (spec.argv.size() == 1 && spec.argv[0].empty())) {
    return MakeError("no program to run ({}): the command is empty", label);
  }
  if (Interrupted()) return MakeError("interrupted before {} started", label);

  LegResult result;
  result.label = label;
  if (spec.shell) {
    result.argv = {"/bin/sh", "-c", fmt::format("{}", fmt::join(spec.argv, " "))};
  } else {
    result.argv = spec.argv;
  }
  leg_detail::LaunchPlan plan;
  if (auto ready = leg_detail::PrepareLaunch(spec, label, result.argv, &plan); !ready) {
    return ready.error();
  }
  auto started = leg_detail::StartLegProcess(&plan, spec, label, &result);
  if (!started) return started.error();
  result.pid = started->pid;
  const leg_detail::LegGuardHold guard_hold(started->pid);  // the group dies with vouch
  ::close(plan.out_w.release());
  ::close(plan.err_w.release());

  leg_detail::RunningLeg leg(spec, observer, &plan, *started, &result);
  leg.WatchUntilMainExits();
  leg.CollectExitStatus();
  leg.EndLeftovers();
  leg.DrainOutput();
  leg.Finish();
  return result;
}

}  // namespace vouch
