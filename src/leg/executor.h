// Running one leg: a command in its own process group, its output streamed to files with
// constant memory, its process tree watched (pids, peak RSS), killed as a group on timeout
// or Ctrl-C, and whatever it left behind reported and killed. SPEC "Legs and runs".
//
// LegExecutor is the seam a cluster executor (Slurm, SPEC "Where it is going") plugs into;
// LocalExecutor runs legs on this machine.
#pragma once

#include <csignal>  // the signal numbers of kTerminatingSignals
#include <cstdint>
#include <memory>    // std::unique_ptr for MakeLocalExecutor
#include <optional>  // caps and exit codes that may be absent
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace vouch {

struct LegSpec {
  // The program and its arguments. argv[0] is looked up on PATH (the PATH of the leg's
  // environment, i.e. after `env` additions) unless it contains a '/'; a relative path
  // with a '/' is relative to `cwd`. Never run through a shell unless `shell` is set.
  std::vector<std::string> argv;
  // When set, the argv elements are joined with spaces and run as `/bin/sh -c "<line>"`.
  bool shell = false;
  // Added on top of the inherited environment; a name given here replaces the inherited
  // value. The caller puts VOUCH_METRICS here. vouch adds VOUCH_LEG_ID (unique per leg):
  // it finds processes of the leg that escaped its group and parents (setsid, double fork).
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // empty: vouch's working directory
  // 0: no timeout. At the timeout the whole group gets SIGTERM, then SIGKILL after
  // kill_grace_ns if anything is still alive.
  std::int64_t timeout_ns = 0;
  std::int64_t kill_grace_ns = 2'000'000'000;
  // Files the leg's stdout/stderr are written to (created or truncated). Empty: not kept
  // (still counted, and still shown when teed). The same path for both writes them
  // interleaved into one file, as 2>&1 would (order between the two streams is not kept
  // below the pipe buffer's granularity).
  std::string stdout_path;
  std::string stderr_path;
  bool tee_stdout = false;  // also copy to vouch's stdout
  bool tee_stderr = false;  // also copy to vouch's stderr
  // Per stream: at most this many bytes go to the file; the rest is read and dropped
  // (counted in StreamResult::dropped_bytes). nullopt: no cap.
  std::optional<std::uint64_t> output_cap_bytes;
  // Names the leg in messages: "no such program 'foo' (leg 3)". Empty reads as "leg".
  std::string label;
  // How often the process tree is sampled (RSS, pids, LegObserver::OnPoll).
  std::int64_t poll_interval_ns = 20'000'000;
};

// One captured stream. produced = written + dropped.
struct StreamResult {
  std::string path;
  std::uint64_t produced_bytes = 0;  // everything the leg wrote to the stream
  std::uint64_t written_bytes = 0;   // what reached the file (all of it is on disk)
  std::uint64_t dropped_bytes = 0;   // over the cap, or after a write error
  // Set when writing the file failed (e.g. ENOSPC): "writing '/x/stdout.txt': No space
  // left on device after 123 bytes". The file keeps everything written before.
  std::string write_error;
};

// A process of the leg still running after its main process exited: a forked child, or one
// that escaped the group and its parents and was re-parented to vouch (the subreaper).
struct LeftoverProcess {
  int pid = 0;
  std::string name;               // /proc/<pid>/comm
  std::vector<std::string> argv;  // /proc/<pid>/cmdline (empty when it could not be read)
  std::string ended_by;           // "SIGTERM", "SIGKILL", or "" when it would not die
  // "sleep 301 (pid 123)": argv when known, else the name.
  std::string Describe() const;
};

struct LegResult {
  std::string label;
  std::vector<std::string> argv;  // as executed (after the shell wrapping, if any)
  int pid = 0;                    // the main process (also the process group id)

  // Exactly one of exit_code / term_signal is set.
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  std::string signal_name;   // "SIGSEGV" when term_signal is set
  bool timed_out = false;    // killed by vouch at spec.timeout_ns
  bool interrupted = false;  // killed by vouch because vouch got SIGINT/SIGTERM
  // Killed by vouch because its output could not be written (see StreamResult::write_error).
  // A leg whose evidence cannot be kept is not worth running on: ENOSPC kills it.
  bool killed_for_output_error = false;

  std::int64_t wall_ns = 0;  // steady clock, spawn to reap of the main process
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;

  // The leg's own memory, never vouch's: max(sum of VmRSS over the live tree at each poll,
  // main_max_rss_bytes).
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t tree_peak_rss_bytes = 0;  // the polled part
  // The main process: wait4's ru_maxrss (covers its reaped children too) when it exceeds
  // what Linux carried over from vouch through fork and exec, else its polled VmHWM.
  std::uint64_t main_max_rss_bytes = 0;
  std::vector<int> pids_seen;  // every pid of the tree over its life, sorted

  StreamResult out;
  StreamResult err;

  // Processes of the leg still alive after the main process exited (a forked child that
  // outlived it, a daemon it started); all were ended before Run returned: SIGTERM, then
  // SIGKILL after spec.kill_grace_ns. Their work may have run on past the leg's end, so a
  // leg that left any is not a clean measurement (the leg runner makes it invalid).
  std::vector<LeftoverProcess> leftovers;
  // Notes worth showing (e.g. "output pipe still held open after the leg ended").
  std::vector<std::string> notes;

  // Exited with status 0, and nothing above went wrong (leftovers aside: see
  // DescribeLeftovers).
  bool Succeeded() const;
  // "left 1 process running after it exited: sleep 301 (pid 123); ended it", or "".
  std::string DescribeLeftovers() const;
  // "exited with status 0", "killed by SIGSEGV", "timed out after 2.0 s (killed by SIGTERM)",
  // "interrupted (killed by SIGTERM)", with leftovers and output errors appended.
  std::string Describe() const;
};

// Called on the executor's thread. Keep it quick: while it runs the leg's output is not
// drained (pipes buffer about 1 MiB, then the leg blocks on write).
class LegObserver {
 public:
  virtual ~LegObserver() = default;
  virtual void OnStart(int /*pid*/) {}
  // Every poll_interval_ns while the leg runs: the pids of its tree alive now (sorted),
  // e.g. to sample NVML's per-process device memory.
  virtual void OnPoll(const std::vector<int>& /*live_pids*/) {}
};

class LegExecutor {
 public:
  virtual ~LegExecutor() = default;
  // An Error means the leg could not be started (no such program, bad cwd, unwritable
  // output file, vouch already interrupted). A leg that started always gives a LegResult,
  // whatever happened to it.
  virtual Result<LegResult> Run(const LegSpec& spec, LegObserver* observer) = 0;
};

struct LocalExecutorOptions {
  // Makes vouch a child subreaper (prctl PR_SET_CHILD_SUBREAPER) so that orphans of the
  // leg are re-parented to vouch rather than to init: they stay findable and vouch reaps
  // them, even where pid 1 does not reap (containers).
  bool subreaper = true;
};

class LocalExecutor : public LegExecutor {
 public:
  explicit LocalExecutor(LocalExecutorOptions options = {});
  Result<LegResult> Run(const LegSpec& spec, LegObserver* observer) override;

 private:
  LocalExecutorOptions options_;
};

// Resolves argv[0] the way Run does: the absolute path of the program, or the error
// "no such program 'foo' (leg 3): ..." / "program '/x' is not executable (leg 3): ...".
// PATH_VALUE is the PATH to search; CWD resolves relative paths ("" = current directory).
Result<std::string> ResolveProgram(const std::string& program, const std::string& path_value,
                                   const std::string& cwd, const std::string& label);

// "SIGSEGV" for SIGSEGV; "SIG42" when the number has no name.
std::string SignalName(int signal_number);

// The signals that end vouch unless handled: a closed terminal or ssh session (SIGHUP),
// Ctrl-C (SIGINT), Ctrl-\ (SIGQUIT), kill and job schedulers (SIGTERM).
inline constexpr int kTerminatingSignals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

// For the CLI (library code never installs handlers): every signal of kTerminatingSignals
// sets a flag that makes a running LocalExecutor kill its leg's group (SIGTERM, then SIGKILL
// after the grace; a second signal sends SIGKILL at once) and return a result marked
// interrupted, so that the caller writes its record, resets locked clocks and exits with
// InterruptExitCode(). After SIGHUP vouch's terminal descriptors point to /dev/null (the
// terminal is gone; writing to it would fail). Also ignores SIGPIPE so that a closed pipe
// does not kill vouch while it prints.
Status InstallInterruptHandler();
bool Interrupted();
// The first terminating signal received (SIGHUP...), 0 when none.
int InterruptSignal();
// 128 + that signal, as a shell reports a process killed by it (130 for SIGINT; 130 when
// none was received).
int InterruptExitCode();
// Forgets an interruption (tests; a CLI that wants to go on after one).
void ClearInterrupted();

}  // namespace vouch
