// RunningLeg (running_leg.h): a started leg watched, ended and drained, step by step.
#include "leg/running_leg.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "leg/interrupt.h"

namespace vouch::leg_detail {

namespace {
constexpr std::uint64_t kPumpBudget = 4 << 20;  // per stream per wake-up, so neither starves
}  // namespace

RunningLeg::RunningLeg(const LegSpec& spec, LegObserver* observer, LaunchPlan* plan,
                       const StartedLeg& started, LegResult* result)
    : spec_(spec),
      observer_(observer),
      result_(result),
      pid_(started.pid),
      start_steady_ns_(started.start_steady_ns),
      pre_exec_hwm_bytes_(started.report.pre_exec_hwm_bytes),
      pidfd_(static_cast<int>(::syscall(SYS_pidfd_open, started.pid, 0))),
      out_pump_(plan->out_r.release(), plan->out_file.release(), spec.tee_stdout ? 1 : -1,
                spec.output_cap_bytes, spec.stdout_path),
      err_pump_(plan->err_r.release(), plan->err_file.release(), spec.tee_stderr ? 2 : -1,
                spec.output_cap_bytes, spec.stderr_path),
      buffer_(64 * 1024),
      tree_(started.pid, plan->marker),
      main_hwm_bytes_(ReadHwmBytes(started.pid)),
      next_full_scan_ns_(SteadyNs() + 1'000'000'000),
      interval_ns_(std::max<std::int64_t>(spec.poll_interval_ns, 1'000'000)),
      deadline_ns_(spec.timeout_ns > 0 ? started.start_steady_ns + spec.timeout_ns : 0) {}

void RunningLeg::WatchUntilMainExits() {
  if (observer_ != nullptr) observer_->OnStart(pid_);
  // The first sample waits for the first tick: a leg shorter than that pays no scan while
  // it runs (its peak RSS then comes from wait4).
  next_poll_ns_ = SteadyNs() + interval_ns_;
  interrupts_seen_ = InterruptCount();
  for (;;) {
    const std::int64_t now0 = SteadyNs();
    SleepUntilSomethingHappens(now0);
    if (PumpOutputAndCatchExit(now0)) return;
    const std::int64_t now = SteadyNs();
    KillOnOutputError(now);
    KillOnInterrupt(now);
    if (ReapMain()) return;
    KillOnTimeoutAndGrace(now);
    if (now >= next_poll_ns_) {
      Sample();
      next_poll_ns_ = std::max(next_poll_ns_ + interval_ns_, now + interval_ns_ / 2);
    }
  }
}

void RunningLeg::SleepUntilSomethingHappens(std::int64_t now_ns) {
  std::int64_t wake_ns = next_poll_ns_;
  if (deadline_ns_ > 0 && kill_stage_ == Kill::kNone) wake_ns = std::min(wake_ns, deadline_ns_);
  if (kill_stage_ == Kill::kTermSent) wake_ns = std::min(wake_ns, kill_at_ns_);
  const std::int64_t wait_ns = std::max<std::int64_t>(wake_ns - now_ns, 0);
  const struct timespec ts {
    static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)
  };
  std::array<pollfd, 4> fds{};
  nfds_t nfds = 0;
  const int wake_fd = InterruptWakeFd();
  for (int fd : {out_pump_.pipe_fd(), err_pump_.pipe_fd(), pidfd_.fd, wake_fd}) {
    if (fd >= 0) fds[nfds++] = pollfd{fd, POLLIN, 0};
  }
  ::ppoll(fds.data(), nfds, &ts, nullptr);
}

bool RunningLeg::PumpOutputAndCatchExit(std::int64_t now0_ns) {
  const bool pipes_were_open = out_pump_.open() || err_pump_.open();
  PumpBoth(kPumpBudget);
  if (!pipes_were_open || (out_pump_.open() && err_pump_.open())) return false;
  // A stream just ended: the main process is most often exiting (the kernel closes its
  // files just before it reports the exit). Yield briefly rather than sleep in ppoll
  // and pay a second and third wake-up on a busy machine; at most ~200 us are spent
  // when the process goes on without its output.
  for (int spin = 0; spin < 64; ++spin) {
    if (ReapMain()) return true;
    PumpBoth(kPumpBudget);
    if (SteadyNs() - now0_ns > 200'000) break;
    ::sched_yield();
  }
  return false;
}

bool RunningLeg::ReapMain() { return ::wait4(pid_, &status_, WNOHANG, &usage_) == pid_; }

void RunningLeg::KillOnOutputError(std::int64_t now_ns) {
  // Both asked (|, not ||): each pump's error is taken once.
  if ((out_pump_.TakeNewWriteError() | err_pump_.TakeNewWriteError()) &&
      kill_stage_ == Kill::kNone) {
    result_->killed_for_output_error = true;
    BeginKill(now_ns);
  }
}

void RunningLeg::KillOnInterrupt(std::int64_t now_ns) {
  const int count = InterruptCount();
  if (count <= interrupts_seen_) return;
  interrupts_seen_ = count;
  DrainInterruptWakeFd();
  if (kill_stage_ == Kill::kNone) {
    result_->interrupted = true;
    BeginKill(now_ns);
  } else if (kill_stage_ == Kill::kTermSent) {
    result_->interrupted = true;
    SignalTree(SIGKILL);  // asked twice: no more grace
    kill_stage_ = Kill::kKillSent;
  }
}

void RunningLeg::KillOnTimeoutAndGrace(std::int64_t now_ns) {
  if (deadline_ns_ > 0 && kill_stage_ == Kill::kNone && now_ns >= deadline_ns_) {
    result_->timed_out = true;
    BeginKill(now_ns);
  }
  if (kill_stage_ == Kill::kTermSent && now_ns >= kill_at_ns_) {
    SignalTree(SIGKILL);
    kill_stage_ = Kill::kKillSent;
  }
}

void RunningLeg::BeginKill(std::int64_t now_ns) {
  if (kill_stage_ != Kill::kNone) return;
  SignalTree(SIGTERM);
  kill_stage_ = Kill::kTermSent;
  kill_at_ns_ = now_ns + std::max<std::int64_t>(spec_.kill_grace_ns, 0);
}

void RunningLeg::SignalTree(int sig) {
  ::kill(-pid_, sig);
  for (const ProcStat& m : tree_.live_members()) {
    if (m.pgrp != pid_) ::kill(m.pid, sig);
  }
}

void RunningLeg::Sample() {
  const std::int64_t now = SteadyNs();
  if (now >= next_scan_ns_) {
    const bool full = now >= next_full_scan_ns_;
    if (full) next_full_scan_ns_ = now + 1'000'000'000;
    tree_.Scan(full ? ScanScope::kFull : ScanScope::kTree);
    main_hwm_bytes_ = std::max(main_hwm_bytes_, ReadHwmBytes(pid_));
    result_->tree_peak_rss_bytes = std::max(result_->tree_peak_rss_bytes, tree_.live_rss_bytes());
    const std::int64_t every = std::max<std::int64_t>(spec_.poll_interval_ns, 1'000'000) *
                               (now - start_steady_ns_ < 1'000'000'000 ? 1 : 5);
    next_scan_ns_ = now + every - every / 10;
  }
  if (observer_ != nullptr) observer_->OnPoll(tree_.live_pids());
}

void RunningLeg::PumpBoth(std::uint64_t budget_bytes) {
  out_pump_.Pump(buffer_, budget_bytes);
  err_pump_.Pump(buffer_, budget_bytes);
}

void RunningLeg::CollectExitStatus() {
  result_->wall_ns = SteadyNs() - start_steady_ns_;
  result_->end_unix_ns = UnixNs();
  if (WIFEXITED(status_)) {
    result_->exit_code = WEXITSTATUS(status_);
  } else if (WIFSIGNALED(status_)) {
    result_->term_signal = WTERMSIG(status_);
    result_->signal_name = SignalName(WTERMSIG(status_));
  }
  // Linux charges the resident high-water mark of the image replaced by execve (vouch's
  // memory, which the child shared until then) to the child's ru_maxrss: that figure is the
  // leg's own only when it is above what the child held just before its exec (1 MiB of slack for
  // the pages the last steps touched). Below it, the polled figures are all that is the leg's.
  const auto wait4_rss = static_cast<std::uint64_t>(usage_.ru_maxrss) * 1024;
  constexpr std::uint64_t kPreExecSlack = 1 << 20;
  result_->main_max_rss_bytes =
      wait4_rss > pre_exec_hwm_bytes_ + kPreExecSlack ? wait4_rss : main_hwm_bytes_;
}

// Whatever of the tree outlived the main process is reported and ended: SIGTERM, then
// SIGKILL after the grace (at once on a further interrupt). A process it forks meanwhile
// is found by the next scan and ended the same way.
void RunningLeg::EndLeftovers() {
  tree_.Scan();
  result_->tree_peak_rss_bytes = std::max(result_->tree_peak_rss_bytes, tree_.live_rss_bytes());
  NoteLeftovers();
  if (!result_->leftovers.empty()) SignalLeftoversUntilGone();
  ReapTreeZombies();
}

void RunningLeg::NoteLeftovers() {
  std::vector<LeftoverProcess>& leftovers = result_->leftovers;
  for (const ProcStat& m : tree_.live_members()) {
    const bool known = std::any_of(leftovers.begin(), leftovers.end(),
                                   [&](const LeftoverProcess& p) { return p.pid == m.pid; });
    if (!known) leftovers.push_back(LeftoverProcess{m.pid, m.comm, ReadCmdline(m.pid), ""});
  }
}

void RunningLeg::MarkEndedLeftovers(int ending_signal) {
  for (LeftoverProcess& p : result_->leftovers) {
    const bool alive = std::any_of(tree_.live_members().begin(), tree_.live_members().end(),
                                   [&](const ProcStat& m) { return m.pid == p.pid; });
    if (!alive && p.ended_by.empty()) p.ended_by = SignalName(ending_signal);
  }
}

void RunningLeg::SignalLeftoversUntilGone() {
  SignalTree(SIGTERM);
  const std::int64_t sigkill_at_ns = SteadyNs() + std::max<std::int64_t>(spec_.kill_grace_ns, 0);
  const std::int64_t give_up_ns = sigkill_at_ns + 5'000'000'000;
  int ending = SIGTERM;
  for (;;) {
    // With the subreaper they are our children: reaping them here keeps no zombies.
    for (const LeftoverProcess& p : result_->leftovers) ::waitpid(p.pid, nullptr, WNOHANG);
    PumpBoth(kPumpBudget);
    tree_.Scan();
    NoteLeftovers();
    MarkEndedLeftovers(ending);
    if (tree_.live_members().empty()) break;
    const std::int64_t now = SteadyNs();
    const bool asked_again = InterruptCount() > interrupts_seen_;
    if (now >= give_up_ns) {
      result_->notes.push_back(
          fmt::format("{} leftover process(es) did not die within 5 s of SIGKILL",
                      tree_.live_members().size()));
      break;
    }
    if (now >= sigkill_at_ns || asked_again) ending = SIGKILL;
    SignalTree(ending);
    ::usleep(5000);
  }
}

// Reaps zombies of the tree that were re-parented to us (subreaper).
void RunningLeg::ReapTreeZombies() {
  for (int p : tree_.SeenPids()) {
    if (p == pid_) continue;
    ProcStat s;
    if (ReadProcStat(p, &s) && s.state == 'Z' && s.ppid == ::getpid()) {
      ::waitpid(p, nullptr, WNOHANG);
    }
  }
}

// A writer we could not find (it escaped the tree) may keep a pipe open: stop after a bounded
// time rather than hang.
void RunningLeg::DrainOutput() {
  const std::int64_t drain_until_ns = SteadyNs() + 1'000'000'000;
  while (out_pump_.open() || err_pump_.open()) {
    std::array<pollfd, 2> fds{};
    nfds_t nfds = 0;
    for (int fd : {out_pump_.pipe_fd(), err_pump_.pipe_fd()}) {
      if (fd >= 0) fds[nfds++] = pollfd{fd, POLLIN, 0};
    }
    const std::int64_t left_ns = drain_until_ns - SteadyNs();
    if (left_ns <= 0) {
      result_->notes.push_back(
          "an output pipe was still held open by a process outside the leg's tree; stopped "
          "reading it 1 s after the leg ended");
      break;
    }
    ::poll(fds.data(), nfds, static_cast<int>(left_ns / 1'000'000) + 1);
    PumpBoth(UINT64_MAX);
  }
}

void RunningLeg::Finish() {
  // A write error found only while draining needs nothing more: the leg had already ended.
  result_->out = out_pump_.result();
  result_->err = err_pump_.result();
  result_->pids_seen = tree_.SeenPids();
  result_->peak_rss_bytes = std::max(result_->tree_peak_rss_bytes, result_->main_max_rss_bytes);
}

}  // namespace vouch::leg_detail
