// The process tree of a leg, read from /proc: who is in it now, its summed RSS, and every
// pid it ever had. Internal to src/leg.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace vouch::leg_detail {

struct ProcStat {
  int pid = 0;
  int ppid = 0;
  int pgrp = 0;
  char state = '?';
  std::uint64_t start_ticks = 0;  // field 22: tells a reused pid from the one we saw
  std::uint64_t rss_pages = 0;    // field 24: the same count as VmRSS in /proc/<pid>/status
  long threads = 0;               // field 20
  std::string comm;
};

// Parses the text of /proc/<pid>/stat; false when it is not one (comm may hold spaces and
// parentheses, so fields are counted from the last ')').
bool ParseProcStat(const std::string& text, ProcStat* out);
// VmHWM of PID (its own peak resident set since its exec) in bytes, from
// /proc/<pid>/status; 0 when the process is gone or a zombie.
std::uint64_t ReadHwmBytes(int pid);
// The same from the status file at STATUS_PATH; async-signal-safe (a child of fork uses it).
std::uint64_t ReadHwmBytesAt(const char* status_path);
// Reads /proc/<pid>/stat; false when the process is gone.
bool ReadProcStat(int pid, ProcStat* out);
// The arguments of PID from /proc/<pid>/cmdline, at most MAX_BYTES of them; empty when the
// process is gone, is a kernel thread, or is not ours to read.
std::vector<std::string> ReadCmdline(int pid, std::size_t max_bytes = 8192);

// How much of /proc a scan reads.
enum class ScanScope {
  // vouch's descendants only (/proc/<pid>/task/<tid>/children from vouch down) and the
  // members seen before: with vouch a child subreaper every process of the leg is one of
  // them, escaped or not, and the cost does not grow with the machine's process count.
  // Falls back to kFull where the tree cannot be walked (no subreaper, no children files).
  kTree,
  // Every process that may belong to the leg, vouch's descendant or not (the environment
  // marker): the pids handed out since the leg started are read one by one when they are
  // few, else /proc is listed.
  kFull,
};

class ProcTree {
 public:
  // MAIN_PID is also the leg's process group id. ENV_MARKER ("NAME=value", may be empty)
  // is a variable only the leg's environment holds: a process started during the leg whose
  // environment has it belongs to the leg even if it escaped the group and its parents
  // (setsid and a double fork). ScanScope::kTree is used only when the kernel says vouch is
  // a child subreaper (orphans of the leg are re-parented to it).
  ProcTree(int main_pid, std::string env_marker);

  // One pass over /proc (SCOPE says how much of it). A process belongs to the leg when it is the
  // main process, is in its process group, descends from a member, is a member seen earlier (same
  // start time), started after the leg with the marker in its environment, or started after the leg
  // and is a child of vouch other than the main process. The last rule finds a process that escaped
  // with setsid and `env -i` (no marker) through a double fork: its parent died and the kernel
  // re-parented it to vouch, the child subreaper. vouch starts no other process while a leg runs,
  // so such a child can only be the leg's. Pids found foreign are remembered and not read again
  // while they exist.
  void Scan(ScanScope scope = ScanScope::kFull);
  bool can_walk_tree() const { return walk_tree_; }

  const std::vector<int>& live_pids() const { return live_; }  // sorted, zombies excluded
  std::uint64_t live_rss_bytes() const { return live_rss_bytes_; }
  std::vector<int> SeenPids() const;
  // Members alive now, zombies excluded (after a Scan).
  const std::vector<ProcStat>& live_members() const { return live_members_; }

 private:
  bool HasEnvMarker(int pid) const;
  // Whether PID may have been allocated since the leg started, from the kernel's last
  // allocated pid: pids are handed out cyclically, so everything of the leg lies in
  // (main_pid, last_pid]. Lets a scan skip the stat of every older process on the machine.
  // False for nothing when the range is unknown (full scans).
  bool MaybeNew(int pid) const;
  void UpdatePidRange();
  // The stat of every pid in [main pid, last pid] that is a process (not a thread) and
  // not known foreign; false when the range is unknown or too wide to probe pid by pid.
  bool ProbePidRange(std::vector<ProcStat>* out);
  void ListProc(std::vector<ProcStat>* out);
  // The stat of every descendant of vouch, and of the members seen before that are not.
  void WalkTree(std::vector<ProcStat>* out);
  // Reads PID's and stats the children of each of its threads into OUT (breadth first).
  void AddChildren(int pid, long threads, std::vector<ProcStat>* out,
                   std::unordered_set<int>* listed) const;
  bool SkipForeign(int pid);

  int main_pid_;
  std::string env_marker_;
  std::uint64_t leg_start_ticks_ = 0;  // start time of the main process
  long page_bytes_;
  long pid_max_ = 0;
  long last_pid_ = 0;  // 0: range unknown, read every pid
  std::uint64_t pids_allocated_ = 0;
  bool walk_tree_ = false;                          // ScanScope::kTree available
  bool can_probe_ = false;                          // pidfd_open tells a process from a thread
  std::map<int, std::uint64_t> seen_;               // pid -> start ticks
  std::unordered_map<int, std::uint64_t> foreign_;  // pid -> scan generation last listed
  std::uint64_t generation_ = 0;
  std::vector<int> live_;
  std::vector<ProcStat> live_members_;
  std::uint64_t live_rss_bytes_ = 0;
};

}  // namespace vouch::leg_detail
