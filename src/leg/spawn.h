// Starting a leg's process: a vfork-like clone, then in the child only async-signal-safe
// system calls before execve (vouch has other threads). Internal to src/leg (local_executor.cc).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>

namespace vouch::leg_detail {

// What the child does, every string prepared by the parent.
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;     // nullptr: vouch's own
  int out_fd, err_fd;  // both >= 3
  int report_fd;       // O_CLOEXEC: EOF there means the exec succeeded
  pid_t parent;
  const sigset_t* default_set;  // signals reset to their default action
};

// Sent on the report pipe: the child's resident high-water mark just before execve (Linux
// charges it to the leg's ru_maxrss), then, only when a step failed, the step and errno.
struct ChildReport {
  std::uint64_t pre_exec_hwm_bytes = 0;
  int step = 0;  // 0: none failed
  int error = 0;
};
constexpr int kStepChdir = 1, kStepExec = 2, kStepSetup = 3;

// In the child (StartChild): sets PR_SET_PDEATHSIG (SIGKILL; exits if vouch is already gone),
// its own process group, stdin /dev/null and stdout/stderr, closes vouch's other
// descriptors at exec, enters the working directory, resets signals, and execs.
[[noreturn]] void RunChild(const ChildPlan& plan);

// Starts a process that runs RunChild(PLAN) (clone with CLONE_VM | CLONE_VFORK: it shares
// vouch's memory until its execve or exit, and this thread waits until then). Its pid, or -1
// with errno set. Call with every signal blocked, so that none of vouch's handlers runs in it.
pid_t StartChild(const ChildPlan& plan);

}  // namespace vouch::leg_detail
