// The leg guard: a leg's process group ends when vouch does, however vouch ends.
//
// PR_SET_PDEATHSIG (spawn.h) reaches the leg's main process only: a vouch killed by SIGKILL
// left the processes that process had started (a shell's `sleep`, a launcher's workers)
// running, unsupervised. The guard is one small process per vouch, forked before the first
// leg, that holds the read end of a pipe whose only write end is vouch's (close-on-exec, so no
// leg holds it). vouch tells it each leg's process group as the leg starts and again when the
// leg is over; when the pipe reads end-of-file (vouch has exited, crashed or been killed), it
// sends SIGKILL to every group it still holds, and exits. The guard is in a process group of
// its own (a Ctrl-C at the terminal is vouch's to handle), blocks every signal it can, and
// runs only system calls. Internal to src/leg (local_executor.cc, proc_tree.cc).
#pragma once

#include <sys/types.h>

namespace vouch::leg_detail {

// Starts the guard once per process (a no-op after the first call, and after a failure: the
// legs then have PR_SET_PDEATHSIG alone). Call with no leg running.
void StartLegGuard();
// The guard's pid (vouch's own child, never one of a leg's), or 0 when there is none.
pid_t LegGuardPid();
// PGID is a leg's process group from now on (Watch) / no longer (Release).
void LegGuardWatch(pid_t pgid);
void LegGuardRelease(pid_t pgid);

// Watches PGID while it lives: from the leg's start until it is over and reaped.
class LegGuardHold {
 public:
  explicit LegGuardHold(pid_t pgid) : pgid_(pgid) { LegGuardWatch(pgid); }
  ~LegGuardHold() { LegGuardRelease(pgid_); }
  LegGuardHold(const LegGuardHold&) = delete;
  LegGuardHold& operator=(const LegGuardHold&) = delete;

 private:
  pid_t pgid_;
};

}  // namespace vouch::leg_detail
