// LocalExecutor: start (a vfork-like clone) and exec into a new process group (the leg dies with
// vouch), one ppoll loop that drains the output pipes, watches a pidfd for the main process's exit,
// samples the tree every poll_interval_ns, and enforces the timeout and Ctrl-C by signalling the
// whole group.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "leg/executor.h"
#include "leg/guard.h"
#include "leg/interrupt.h"
#include "leg/output_pump.h"
#include "leg/proc_tree.h"
#include "leg/spawn.h"
#include "util/redact.h"
#include "util/strings.h"

extern char** environ;

namespace vouch {
namespace {

using leg_detail::ChildPlan;
using leg_detail::ChildReport;
using leg_detail::kStepChdir;
using leg_detail::kStepSetup;
using leg_detail::OutputPump;
using leg_detail::ProcStat;
using leg_detail::ProcTree;

std::int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t UnixNs() {
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

Result<int> OpenOutput(const std::string& path, const char* stream, const std::string& label) {
  if (path.empty()) return -1;
  // No O_APPEND: splice(2) refuses appending files.
  // O_NOFOLLOW: a leg may plant a symlink where a later leg's output goes.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    return MakeError(
        "cannot write the {} of {} to '{}': {}; check that the folder exists and is writable",
        stream, label, path, std::strerror(errno));
  }
  return fd;
}

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

  if (!spec.cwd.empty()) {
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0) {
      return MakeError("working directory '{}' of {} does not exist: {}", spec.cwd, label,
                       std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return MakeError("working directory '{}' of {} is not a directory", spec.cwd, label);
    }
  }

  // The environment: inherited, with the additions replacing same-named variables.
  std::vector<std::string> env_strings;
  std::string path_value = "/usr/local/bin:/usr/bin:/bin";
  if (const char* p = ::getenv("PATH")) path_value = p;
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return MakeError(
          "bad environment variable name '{}' for {}: it must be non-empty and have no '='", name,
          label);
    }
    if (name == "PATH") path_value = value;
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string_view name = kv.substr(0, kv.find('='));
    const bool replaced =
        name == "VOUCH_LEG_ID" || std::any_of(spec.env.begin(), spec.env.end(),
                                              [&](const auto& add) { return add.first == name; });
    if (!replaced) env_strings.emplace_back(kv);
  }
  for (const auto& [name, value] : spec.env) {
    if (name != "VOUCH_LEG_ID") env_strings.push_back(name + "=" + value);  // vouch's own
  }
  // Marks the leg's processes, so that one that escapes its group and parents is still found.
  static std::atomic<unsigned> leg_counter{0};
  const std::string marker =
      fmt::format("VOUCH_LEG_ID={}-{}-{}", ::getpid(), leg_counter.fetch_add(1), UnixNs());
  env_strings.push_back(marker);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = result.argv;
  std::vector<char*> argvp;
  for (auto& s : argv_strings) argvp.push_back(s.data());
  argvp.push_back(nullptr);

  auto program = ResolveProgram(result.argv[0], path_value, spec.cwd, label);
  if (!program) return program.error();

  auto out_file = OpenOutput(spec.stdout_path, "stdout", label);
  if (!out_file) return out_file.error();
  Fd out_file_fd(*out_file);
  Fd err_file_fd;
  if (!spec.stderr_path.empty() && spec.stderr_path == spec.stdout_path) {
    // One file for both (2>&1): share the open file, hence its offset, or the two streams
    // would overwrite each other from offset 0.
    err_file_fd.fd = ::fcntl(out_file_fd.fd, F_DUPFD_CLOEXEC, 0);
  } else {
    auto err_file = OpenOutput(spec.stderr_path, "stderr", label);
    if (!err_file) return err_file.error();
    err_file_fd.fd = *err_file;
  }

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: pipe: {}", label, std::strerror(errno));
  }
  Fd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: pipe: {}", label, std::strerror(errno));
  }
  Fd err_r(err_pipe[0]), err_w(err_pipe[1]);
  for (int fd : {out_r.fd, err_r.fd}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for chatty legs; best effort
  }

  sigset_t default_set;
  sigemptyset(&default_set);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2}) {
    sigaddset(&default_set, sig);
  }
  // The child's ends above 2, so that dup2 onto 0..2 never clobbers one of them.
  Fd child_out(::fcntl(out_w.fd, F_DUPFD_CLOEXEC, 3)),
      child_err(::fcntl(err_w.fd, F_DUPFD_CLOEXEC, 3));
  int report_pipe[2];
  if (child_out.fd < 0 || child_err.fd < 0 || ::pipe2(report_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: {}", label, std::strerror(errno));
  }
  Fd report_r(report_pipe[0]), report_w(report_pipe[1]);
  const ChildPlan plan{
      program->c_str(), argvp.data(), envp.data(), spec.cwd.empty() ? nullptr : spec.cwd.c_str(),
      child_out.fd,     child_err.fd, report_w.fd, ::getpid(),
      &default_set};

  const std::int64_t start_steady_ns = SteadyNs();
  result.start_unix_ns = UnixNs();
  // Not posix_spawn: the child sets PR_SET_PDEATHSIG before its exec. Signals are blocked
  // across the start so that none of vouch's handlers runs in the child.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  leg_detail::StartLegGuard();
  const pid_t pid = leg_detail::StartChild(plan);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    return MakeError("cannot start {} ({}): clone: {}", result.argv[0], label,
                     std::strerror(fork_errno));
  }
  ::close(report_w.release());
  ::close(child_out.release());
  ::close(child_err.release());
  ChildReport report;
  {
    ChildReport got[2];
    std::size_t have = 0;
    for (ssize_t n;
         have < sizeof got &&
         (n = ::read(report_r.fd, reinterpret_cast<char*>(got) + have, sizeof got - have)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      have += static_cast<std::size_t>(n);
    }
    if (have >= sizeof(ChildReport)) report = got[0];
    if (have >= 2 * sizeof(ChildReport)) report = got[1];
    if (have < sizeof(ChildReport)) report.step = kStepSetup, report.error = EPIPE;
  }
  if (report.step != 0) {
    ::waitpid(pid, nullptr, 0);
    if (report.step == kStepChdir)
      return MakeError("cannot start {} ({}): cannot enter working directory '{}': {}",
                       result.argv[0], label, spec.cwd, std::strerror(report.error));
    return MakeError("cannot start {} ({}): {}", result.argv[0], label,
                     std::strerror(report.error));
  }
  result.pid = pid;
  const leg_detail::LegGuardHold guard_hold(pid);  // the group dies with vouch (leg/guard.h)
  ::close(out_w.release());
  ::close(err_w.release());
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));

  OutputPump out_pump(out_r.release(), out_file_fd.release(), spec.tee_stdout ? 1 : -1,
                      spec.output_cap_bytes, spec.stdout_path);
  OutputPump err_pump(err_r.release(), err_file_fd.release(), spec.tee_stderr ? 2 : -1,
                      spec.output_cap_bytes, spec.stderr_path);
  // One fixed buffer for both streams: constant memory whatever the leg writes.
  std::vector<char> buffer(64 * 1024);
  constexpr std::uint64_t kPumpBudget = 4 << 20;  // per stream per wake-up, so neither starves

  ProcTree tree(pid, marker);
  // The main process's own high-water mark (VmHWM of the image it exec'd), read at each
  // sample and once now: a leg too short for a sample still gets its start-up figure.
  std::uint64_t main_hwm_bytes = leg_detail::ReadHwmBytes(pid);
  // While the leg runs the tree is walked from vouch down (every process of the leg is
  // under vouch, the subreaper); once a second the whole range of new pids is read too,
  // for one that carries the leg's marker outside vouch's tree.
  std::int64_t next_full_scan_ns = SteadyNs() + 1'000'000'000;
  // The tree's scan (its /proc reads: most of a poll's cost) runs every poll for the leg's
  // first second, then every fifth poll (100 ms by default); the main process's peak is a
  // high-water mark anyway, and the observers (channel tail, live tick) run every poll.
  std::int64_t next_scan_ns = 0;
  auto sample = [&] {
    const std::int64_t now = SteadyNs();
    if (now >= next_scan_ns) {
      const bool full = now >= next_full_scan_ns;
      if (full) next_full_scan_ns = now + 1'000'000'000;
      tree.Scan(full ? leg_detail::ScanScope::kFull : leg_detail::ScanScope::kTree);
      main_hwm_bytes = std::max(main_hwm_bytes, leg_detail::ReadHwmBytes(pid));
      result.tree_peak_rss_bytes = std::max(result.tree_peak_rss_bytes, tree.live_rss_bytes());
      const std::int64_t every = std::max<std::int64_t>(spec.poll_interval_ns, 1'000'000) *
                                 (now - start_steady_ns < 1'000'000'000 ? 1 : 5);
      next_scan_ns = now + every - every / 10;
    }
    if (observer != nullptr) observer->OnPoll(tree.live_pids());
  };
  // Signals the group and any member that left it (setsid, setpgid).
  auto signal_tree = [&](int sig) {
    ::kill(-pid, sig);
    for (const ProcStat& m : tree.live_members()) {
      if (m.pgrp != pid) ::kill(m.pid, sig);
    }
  };

  if (observer != nullptr) observer->OnStart(pid);
  // The first sample waits for the first tick: a leg shorter than that pays no scan while
  // it runs (its peak RSS then comes from wait4).
  const std::int64_t interval_ns = std::max<std::int64_t>(spec.poll_interval_ns, 1'000'000);
  std::int64_t next_poll_ns = SteadyNs() + interval_ns;
  const std::int64_t deadline_ns = spec.timeout_ns > 0 ? start_steady_ns + spec.timeout_ns : 0;
  enum class Kill { kNone, kTermSent, kKillSent } kill_stage = Kill::kNone;
  std::int64_t kill_at_ns = 0;
  int interrupts_seen = leg_detail::InterruptCount();
  auto begin_kill = [&](std::int64_t now_ns) {
    if (kill_stage != Kill::kNone) return;
    signal_tree(SIGTERM);
    kill_stage = Kill::kTermSent;
    kill_at_ns = now_ns + std::max<std::int64_t>(spec.kill_grace_ns, 0);
  };

  int status = 0;
  struct rusage usage {};
  bool main_done = false;
  while (!main_done) {
    const std::int64_t now0 = SteadyNs();
    std::int64_t wake_ns = next_poll_ns;
    if (deadline_ns > 0 && kill_stage == Kill::kNone) wake_ns = std::min(wake_ns, deadline_ns);
    if (kill_stage == Kill::kTermSent) wake_ns = std::min(wake_ns, kill_at_ns);
    const std::int64_t wait_ns = std::max<std::int64_t>(wake_ns - now0, 0);
    const struct timespec ts {
      static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)
    };
    std::array<pollfd, 4> fds{};
    nfds_t nfds = 0;
    const int wake_fd = leg_detail::InterruptWakeFd();
    for (int fd : {out_pump.pipe_fd(), err_pump.pipe_fd(), pidfd.fd, wake_fd}) {
      if (fd >= 0) fds[nfds++] = pollfd{fd, POLLIN, 0};
    }
    ::ppoll(fds.data(), nfds, &ts, nullptr);

    const bool pipes_were_open = out_pump.open() || err_pump.open();
    out_pump.Pump(buffer, kPumpBudget);
    err_pump.Pump(buffer, kPumpBudget);
    if (pipes_were_open && !(out_pump.open() && err_pump.open())) {
      // A stream just ended: the main process is most often exiting (the kernel closes its
      // files just before it reports the exit). Yield briefly rather than sleep in ppoll
      // and pay a second and third wake-up on a busy machine; at most ~200 us are spent
      // when the process goes on without its output.
      for (int spin = 0; spin < 64; ++spin) {
        const pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
        if (w == pid) {
          main_done = true;
          break;
        }
        out_pump.Pump(buffer, kPumpBudget);
        err_pump.Pump(buffer, kPumpBudget);
        if (SteadyNs() - now0 > 200'000) break;
        ::sched_yield();
      }
      if (main_done) break;
    }
    const std::int64_t now = SteadyNs();
    if ((out_pump.TakeNewWriteError() | err_pump.TakeNewWriteError()) &&
        kill_stage == Kill::kNone) {
      result.killed_for_output_error = true;
      begin_kill(now);
    }
    if (const int count = leg_detail::InterruptCount(); count > interrupts_seen) {
      interrupts_seen = count;
      leg_detail::DrainInterruptWakeFd();
      if (kill_stage == Kill::kNone) {
        result.interrupted = true;
        begin_kill(now);
      } else if (kill_stage == Kill::kTermSent) {
        result.interrupted = true;
        signal_tree(SIGKILL);  // asked twice: no more grace
        kill_stage = Kill::kKillSent;
      }
    }
    const pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
    if (w == pid) {
      main_done = true;
      break;
    }
    if (deadline_ns > 0 && kill_stage == Kill::kNone && now >= deadline_ns) {
      result.timed_out = true;
      begin_kill(now);
    }
    if (kill_stage == Kill::kTermSent && now >= kill_at_ns) {
      signal_tree(SIGKILL);
      kill_stage = Kill::kKillSent;
    }
    if (now >= next_poll_ns) {
      sample();
      next_poll_ns = std::max(next_poll_ns + interval_ns, now + interval_ns / 2);
    }
  }
  result.wall_ns = SteadyNs() - start_steady_ns;
  result.end_unix_ns = UnixNs();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
    result.signal_name = SignalName(WTERMSIG(status));
  }
  // Linux charges the resident high-water mark of the image replaced by execve (vouch's
  // memory, which the child shared until then) to the child's ru_maxrss: that figure is the
  // leg's own only when it is above what the child held just before its exec (1 MiB of slack for
  // the pages the last steps touched). Below it, the polled figures are all that is the leg's.
  const auto wait4_rss = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  constexpr std::uint64_t kPreExecSlack = 1 << 20;
  result.main_max_rss_bytes =
      wait4_rss > report.pre_exec_hwm_bytes + kPreExecSlack ? wait4_rss : main_hwm_bytes;

  // Whatever of the tree outlived the main process is reported and ended: SIGTERM, then
  // SIGKILL after the grace (at once on a further interrupt). A process it forks meanwhile
  // is found by the next scan and ended the same way.
  tree.Scan();
  result.tree_peak_rss_bytes = std::max(result.tree_peak_rss_bytes, tree.live_rss_bytes());
  auto note_leftovers = [&] {
    for (const ProcStat& m : tree.live_members()) {
      const bool known = std::any_of(result.leftovers.begin(), result.leftovers.end(),
                                     [&](const LeftoverProcess& p) { return p.pid == m.pid; });
      if (!known)
        result.leftovers.push_back(
            LeftoverProcess{m.pid, m.comm, leg_detail::ReadCmdline(m.pid), ""});
    }
  };
  note_leftovers();
  if (!result.leftovers.empty()) {
    signal_tree(SIGTERM);
    const std::int64_t sigkill_at_ns = SteadyNs() + std::max<std::int64_t>(spec.kill_grace_ns, 0);
    const std::int64_t give_up_ns = sigkill_at_ns + 5'000'000'000;
    int ending = SIGTERM;
    for (;;) {
      // With the subreaper they are our children: reaping them here keeps no zombies.
      for (const LeftoverProcess& p : result.leftovers) ::waitpid(p.pid, nullptr, WNOHANG);
      out_pump.Pump(buffer, kPumpBudget);
      err_pump.Pump(buffer, kPumpBudget);
      tree.Scan();
      note_leftovers();
      for (LeftoverProcess& p : result.leftovers) {
        const bool alive = std::any_of(tree.live_members().begin(), tree.live_members().end(),
                                       [&](const ProcStat& m) { return m.pid == p.pid; });
        if (!alive && p.ended_by.empty()) p.ended_by = SignalName(ending);
      }
      if (tree.live_members().empty()) break;
      const std::int64_t now = SteadyNs();
      const bool asked_again = leg_detail::InterruptCount() > interrupts_seen;
      if (now >= give_up_ns) {
        result.notes.push_back(
            fmt::format("{} leftover process(es) did not die within 5 s of SIGKILL",
                        tree.live_members().size()));
        break;
      }
      if (now >= sigkill_at_ns || asked_again) ending = SIGKILL;
      signal_tree(ending);
      ::usleep(5000);
    }
  }
  // Reap zombies of the tree that were re-parented to us (subreaper).
  for (int p : tree.SeenPids()) {
    if (p == pid) continue;
    ProcStat s;
    if (leg_detail::ReadProcStat(p, &s) && s.state == 'Z' && s.ppid == ::getpid()) {
      ::waitpid(p, nullptr, WNOHANG);
    }
  }

  // Drain what is left in the pipes. A writer we could not find (it escaped the tree)
  // may keep one open: stop after a bounded time rather than hang.
  const std::int64_t drain_until_ns = SteadyNs() + 1'000'000'000;
  while (out_pump.open() || err_pump.open()) {
    std::array<pollfd, 2> fds{};
    nfds_t nfds = 0;
    for (int fd : {out_pump.pipe_fd(), err_pump.pipe_fd()}) {
      if (fd >= 0) fds[nfds++] = pollfd{fd, POLLIN, 0};
    }
    const std::int64_t left_ns = drain_until_ns - SteadyNs();
    if (left_ns <= 0) {
      result.notes.push_back(
          "an output pipe was still held open by a process outside the leg's tree; stopped "
          "reading it 1 s after the leg ended");
      break;
    }
    ::poll(fds.data(), nfds, static_cast<int>(left_ns / 1'000'000) + 1);
    out_pump.Pump(buffer, UINT64_MAX);
    err_pump.Pump(buffer, UINT64_MAX);
  }
  if (out_pump.TakeNewWriteError() || err_pump.TakeNewWriteError()) {
    // Found only while draining: the leg had already ended, nothing to kill.
  }
  result.out = out_pump.result();
  result.err = err_pump.result();
  result.pids_seen = tree.SeenPids();
  result.peak_rss_bytes = std::max(result.tree_peak_rss_bytes, result.main_max_rss_bytes);
  return result;
}

}  // namespace vouch
