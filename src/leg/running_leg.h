// A started leg, watched until it is over: one ppoll loop that drains the output pipes, watches
// a pidfd for the main process's exit, samples the tree every poll_interval_ns and enforces the
// timeout, Ctrl-C and output errors by signalling the whole group (SIGTERM, then SIGKILL after
// the grace); then its exit status and rusage, the processes it left behind ended, and what
// is left in its pipes drained. Internal to src/leg (local_executor.cc).
#pragma once

#include <sys/resource.h>  // rusage
#include <sys/types.h>     // pid_t

#include <cstdint>
#include <vector>

#include "leg/executor.h"
#include "leg/launch.h"
#include "leg/output_pump.h"
#include "leg/proc_tree.h"

namespace vouch::leg_detail {

class RunningLeg {
 public:
  // Takes the pipes' read ends and the output files from PLAN; fills RESULT as the steps run.
  RunningLeg(const LegSpec& spec, LegObserver* observer, LaunchPlan* plan,
             const StartedLeg& started, LegResult* result);
  RunningLeg(const RunningLeg&) = delete;
  RunningLeg& operator=(const RunningLeg&) = delete;

  // The steps, in this order.
  void WatchUntilMainExits();  // returns once the main process is reaped
  void CollectExitStatus();    // exit code or signal, wall time, the main process's peak RSS
  void EndLeftovers();         // what outlived the main process: reported, ended and reaped
  void DrainOutput();          // what the pipes still hold, for at most 1 s
  void Finish();               // the streams, the pids seen and the peak RSS into the result

 private:
  enum class Kill { kNone, kTermSent, kKillSent };

  // Sleeps in ppoll until output, the main process's exit, an interrupt, the next poll, the
  // deadline or the end of the grace.
  void SleepUntilSomethingHappens(std::int64_t now_ns);
  // Moves the pipes' output; true when the main process exited meanwhile (reaped).
  bool PumpOutputAndCatchExit(std::int64_t now0_ns);
  bool ReapMain();  // wait4 without blocking; true once the main process is reaped
  void KillOnOutputError(std::int64_t now_ns);
  void KillOnInterrupt(std::int64_t now_ns);
  void KillOnTimeoutAndGrace(std::int64_t now_ns);
  void BeginKill(std::int64_t now_ns);  // SIGTERM to the tree, SIGKILL after the grace
  void SignalTree(int sig);             // the group and any member that left it
  void Sample();                        // the tree's scan (not every poll) and the observer
  void PumpBoth(std::uint64_t budget_bytes);
  void NoteLeftovers();                        // live members not yet in result.leftovers
  void MarkEndedLeftovers(int ending_signal);  // those gone since: ended by that signal
  void SignalLeftoversUntilGone();             // SIGTERM, SIGKILL after the grace, 5 s more
  void ReapTreeZombies();

  const LegSpec& spec_;
  LegObserver* observer_;
  LegResult* result_;
  const pid_t pid_;
  const std::int64_t start_steady_ns_;
  const std::uint64_t pre_exec_hwm_bytes_;
  Fd pidfd_;
  OutputPump out_pump_;
  OutputPump err_pump_;
  // One fixed buffer for both streams: constant memory whatever the leg writes.
  std::vector<char> buffer_;
  ProcTree tree_;
  // The main process's own high-water mark (VmHWM of the image it exec'd), read at each
  // sample and once at the start: a leg too short for a sample still gets its start-up figure.
  std::uint64_t main_hwm_bytes_;
  // While the leg runs the tree is walked from vouch down (every process of the leg is
  // under vouch, the subreaper); once a second the whole range of new pids is read too,
  // for one that carries the leg's marker outside vouch's tree.
  std::int64_t next_full_scan_ns_;
  // The tree's scan (its /proc reads: most of a poll's cost) runs every poll for the leg's
  // first second, then every fifth poll (100 ms by default); the main process's peak is a
  // high-water mark anyway, and the observers (channel tail, live tick) run every poll.
  std::int64_t next_scan_ns_ = 0;
  const std::int64_t interval_ns_;
  std::int64_t next_poll_ns_ = 0;
  const std::int64_t deadline_ns_;  // 0: no timeout
  Kill kill_stage_ = Kill::kNone;
  std::int64_t kill_at_ns_ = 0;
  int interrupts_seen_ = 0;
  int status_ = 0;
  struct rusage usage_ {};
};

}  // namespace vouch::leg_detail
