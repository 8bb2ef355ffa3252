#include "leg/proc_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "leg/guard.h"
#include "util/number.h"

namespace vouch::leg_detail {
namespace {

// A /proc number, the whole field; 0 when it is not one (a process that vanished mid-read).
std::int64_t Field(std::string_view token) {
  auto v = ParseInt64(token, "");
  return v ? *v : 0;
}

}  // namespace

bool ParseProcStat(const std::string& text, ProcStat* out) {
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  ProcStat s;
  s.pid = static_cast<int>(Field(text.substr(0, text.find(' '))));
  s.comm = text.substr(open + 1, close - open - 1);
  // Fields after comm, numbered from 3 (state) as in proc(5).
  const char* p = text.c_str() + close + 1;
  int field = 3;
  while (*p != '\0' && field <= 24) {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    const char* start = p;
    while (*p != ' ' && *p != '\0' && *p != '\n') ++p;
    const std::string_view token(start, static_cast<std::size_t>(p - start));
    switch (field) {
      case 3:
        s.state = *start;
        break;
      case 4:
        s.ppid = static_cast<int>(Field(token));
        break;
      case 5:
        s.pgrp = static_cast<int>(Field(token));
        break;
      case 20:
        s.threads = static_cast<long>(Field(token));
        break;
      case 22:
        s.start_ticks = static_cast<std::uint64_t>(Field(token));
        break;
      case 24:
        s.rss_pages = static_cast<std::uint64_t>(Field(token));
        break;
      default:
        break;
    }
    ++field;
    if (*p == '\n') break;
  }
  if (field <= 24 || s.pid <= 0) return false;
  *out = std::move(s);
  return true;
}

static long ReadLong(const char* path);

std::uint64_t ReadHwmBytesAt(const char* status_path) {
  const int fd = ::open(status_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[8192];
  std::size_t len = 0;
  for (ssize_t n; len < sizeof buf - 1 && (n = ::read(fd, buf + len, sizeof buf - 1 - len)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    len += static_cast<std::size_t>(n);
  }
  ::close(fd);
  buf[len] = '\0';
  const char* at = std::strstr(buf, "\nVmHWM:");
  if (at == nullptr) return 0;  // gone, or a zombie (its memory is released)
  std::uint64_t kib = 0;        // "VmHWM:   1234 kB", parsed by hand: no locale, no allocation
  for (at += 7; *at == ' ' || *at == '\t'; ++at) {
  }
  for (; *at >= '0' && *at <= '9'; ++at) kib = kib * 10 + static_cast<std::uint64_t>(*at - '0');
  return kib * 1024;
}

std::uint64_t ReadHwmBytes(int pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", pid);
  return ReadHwmBytesAt(path);
}

bool ReadProcStat(int pid, ProcStat* out) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  return ParseProcStat(std::string(buf, static_cast<std::size_t>(n)), out);
}

std::vector<std::string> ReadCmdline(int pid, std::size_t max_bytes) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
  std::vector<std::string> argv;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return argv;
  std::string data;
  char buf[4096];
  while (data.size() < max_bytes) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - data.size()));
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t nul = data.find('\0', start);
    if (nul == std::string::npos) nul = data.size();
    argv.push_back(data.substr(start, nul - start));
    start = nul + 1;
  }
  return argv;
}

ProcTree::ProcTree(int main_pid, std::string env_marker)
    : main_pid_(main_pid),
      env_marker_(std::move(env_marker)),
      page_bytes_(::sysconf(_SC_PAGESIZE)) {
  ProcStat s;
  if (ReadProcStat(main_pid, &s)) leg_start_ticks_ = s.start_ticks;
  pid_max_ = ReadLong("/proc/sys/kernel/pid_max");
  if (pid_max_ > 0) last_pid_ = main_pid;
  int subreaper = 0;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%ld/children", static_cast<long>(::gettid()));
  walk_tree_ = ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper != 0 &&
               ::access(path, R_OK) == 0;
  // pidfd_open refuses a thread that does not lead its group (EINVAL): a probed pid is
  // a process, as a /proc listing would name it, only when it succeeds.
  if (const int fd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)); fd >= 0) {
    ::close(fd);
    can_probe_ = true;
  }
}

static long ReadLong(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return std::atol(buf);
}

void ProcTree::UpdatePidRange() {
  if (last_pid_ == 0) return;
  const long now = ReadLong("/proc/sys/kernel/ns_last_pid");
  if (now <= 0 || now >= pid_max_) {
    last_pid_ = 0;
    return;
  }
  pids_allocated_ += static_cast<std::uint64_t>((now - last_pid_ + pid_max_) % pid_max_);
  last_pid_ = now;
  // Half a cycle of pids handed out since the leg started: the range could soon pass the
  // main pid again and hide new processes. From here on every pid is read.
  if (pids_allocated_ >= static_cast<std::uint64_t>(pid_max_ / 2)) last_pid_ = 0;
}

bool ProcTree::MaybeNew(int pid) const {
  if (last_pid_ == 0) return true;
  const long to_pid = (pid - main_pid_ + pid_max_) % pid_max_;
  const long to_last = (last_pid_ - main_pid_ + pid_max_) % pid_max_;
  return to_pid <= to_last;
}

bool ProcTree::HasEnvMarker(int pid) const {
  if (env_marker_.empty()) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // another user's process: not ours to judge
  // Entries are NUL-terminated; read in chunks, carrying a tail so that no entry is split.
  std::string data;
  char buf[16384];
  bool found = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nul; (nul = data.find('\0', start)) != std::string::npos; start = nul + 1) {
      if (std::string_view(data).substr(start, nul - start) == env_marker_) found = true;
    }
    data.erase(0, start);
    if (found || data.size() > (1u << 20)) break;
  }
  ::close(fd);
  return found;
}

namespace {
// At most this many pids handed out since the leg started are read one by one (a few
// microseconds each, most of them gone); beyond it /proc is listed.
constexpr long kMaxProbedPids = 512;

// The pids in a /proc/<pid>/task/<tid>/children file, appended to OUT.
void ReadChildren(const char* path, std::vector<int>* out) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  std::int64_t pid = 0;
  bool in_number = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        if (pid <= INT32_MAX) pid = pid * 10 + (buf[i] - '0');
        in_number = true;
      } else {
        if (in_number && pid > 0 && pid <= INT32_MAX) out->push_back(static_cast<int>(pid));
        pid = 0;
        in_number = false;
      }
    }
  }
  if (in_number && pid > 0 && pid <= INT32_MAX) out->push_back(static_cast<int>(pid));
  ::close(fd);
}
}  // namespace

bool ProcTree::SkipForeign(int pid) {
  auto it = foreign_.find(pid);
  if (it == foreign_.end()) return false;
  it->second = generation_;
  return true;
}

void ProcTree::ListProc(std::vector<ProcStat>* out) {
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int pid = static_cast<int>(Field(e->d_name));
    if (!MaybeNew(pid) && !seen_.contains(pid)) continue;
    if (SkipForeign(pid)) continue;
    ProcStat s;
    if (ReadProcStat(pid, &s)) out->push_back(std::move(s));
  }
  ::closedir(dir);
}

bool ProcTree::ProbePidRange(std::vector<ProcStat>* out) {
  if (!can_probe_ || last_pid_ == 0) return false;
  const long span = (last_pid_ - main_pid_ + pid_max_) % pid_max_;
  if (span > kMaxProbedPids) return false;
  for (long k = 0; k <= span; ++k) {
    const int pid = static_cast<int>((main_pid_ + k) % pid_max_);
    if (pid <= 0 || seen_.contains(pid)) continue;  // the seen are read below
    if (auto it = foreign_.find(pid); it != foreign_.end()) {
      // Still there (as a listing would show it): keep it foreign, unread.
      if (::kill(pid, 0) == 0 || errno == EPERM) it->second = generation_;
      continue;
    }
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) continue;  // gone (ESRCH), or a thread of a process (EINVAL)
    ::close(fd);
    ProcStat s;
    if (ReadProcStat(pid, &s)) out->push_back(std::move(s));
  }
  for (const auto& kv : seen_) {
    ProcStat s;
    if (ReadProcStat(kv.first, &s)) out->push_back(std::move(s));
  }
  return true;
}

void ProcTree::AddChildren(int pid, long threads, std::vector<ProcStat>* out,
                           std::unordered_set<int>* listed) const {
  char path[320];  // a task's name is a number; room for any d_name all the same
  std::vector<int> kids;
  if (threads == 1) {
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
    ReadChildren(path, &kids);
  } else {
    // A child is listed under the thread that forked it (an orphan under one of the
    // subreaper's threads): every thread's list is read.
    std::snprintf(path, sizeof path, "/proc/%d/task", pid);
    if (DIR* dir = ::opendir(path)) {
      while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::snprintf(path, sizeof path, "/proc/%d/task/%s/children", pid, e->d_name);
        ReadChildren(path, &kids);
      }
      ::closedir(dir);
    }
  }
  for (int kid : kids) {
    if (!listed->insert(kid).second) continue;
    ProcStat s;
    if (ReadProcStat(kid, &s)) out->push_back(std::move(s));
  }
}

void ProcTree::WalkTree(std::vector<ProcStat>* out) {
  std::unordered_set<int> listed;  // pids read, so that one re-parented mid-walk is read once
  std::vector<ProcStat> all;
  // vouch's own children: the leg's main process under the thread that forked it (this
  // one), its orphans under the thread group's leader (the kernel hands them to the first
  // live thread). Every thread only when those cannot be read.
  std::vector<int> kids;
  char path[64];
  bool readable = true;
  for (const pid_t tid : {::getpid(), ::gettid()}) {
    std::snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(tid));
    readable = readable && ::access(path, R_OK) == 0;
    ReadChildren(path, &kids);
    if (::getpid() == ::gettid()) break;
  }
  if (readable) {
    for (int kid : kids) {
      ProcStat s;
      if (listed.insert(kid).second && ReadProcStat(kid, &s)) all.push_back(std::move(s));
    }
  } else {
    AddChildren(::getpid(), 0, &all, &listed);
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const int pid = all[i].pid;  // AddChildren grows ALL
    AddChildren(pid, all[i].threads, &all, &listed);
  }
  // A member seen before that is no longer under vouch (only without a subreaper).
  for (const auto& kv : seen_) {
    if (listed.contains(kv.first)) continue;
    ProcStat s;
    if (ReadProcStat(kv.first, &s)) all.push_back(std::move(s));
  }
  for (ProcStat& s : all) {
    if (seen_.contains(s.pid) || !SkipForeign(s.pid)) out->push_back(std::move(s));
  }
}

void ProcTree::Scan(ScanScope scope) {
  ++generation_;
  UpdatePidRange();
  std::vector<ProcStat> candidates;
  const bool full = scope == ScanScope::kFull || !walk_tree_;
  if (!full) {
    WalkTree(&candidates);
  } else if (!ProbePidRange(&candidates)) {
    ListProc(&candidates);
  }
  // Forget foreign pids that are gone, so a reused number is looked at again (a walk of
  // the tree does not see them all: only a full scan tells).
  if (full) std::erase_if(foreign_, [&](const auto& kv) { return kv.second != generation_; });

  // Membership to a fixed point: a child may be listed before its parent.
  // The environment is read once, and only for processes newer than the leg that no
  // cheaper rule claims.
  const int self = ::getpid();
  const int guard = static_cast<int>(LegGuardPid());  // vouch's own child (leg/guard.h)
  std::erase_if(candidates, [&](const ProcStat& s) { return guard != 0 && s.pid == guard; });
  std::vector<bool> marked(candidates.size(), false);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const ProcStat& s = candidates[i];
    if (s.pid == main_pid_ || s.pgrp == main_pid_ || s.pid == self || seen_.contains(s.pid) ||
        leg_start_ticks_ == 0 || s.start_ticks < leg_start_ticks_) {
      continue;
    }
    // Re-parented to vouch (the subreaper) and newer than the leg: the leg's (see Scan).
    marked[i] = s.ppid == self || HasEnvMarker(s.pid);
  }
  std::vector<bool> member(candidates.size(), false);
  std::vector<int> member_pids;
  auto is_member_pid = [&](int pid) {
    return std::find(member_pids.begin(), member_pids.end(), pid) != member_pids.end();
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (member[i]) continue;
      const ProcStat& s = candidates[i];
      const auto seen = seen_.find(s.pid);
      if (s.pid == main_pid_ || s.pgrp == main_pid_ ||
          (seen != seen_.end() && seen->second == s.start_ticks) || is_member_pid(s.ppid) ||
          marked[i]) {
        member[i] = true;
        member_pids.push_back(s.pid);
        changed = true;
      }
    }
  }
  live_.clear();
  live_members_.clear();
  live_rss_bytes_ = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    ProcStat& s = candidates[i];
    if (!member[i]) {
      foreign_[s.pid] = generation_;
      continue;
    }
    seen_[s.pid] = s.start_ticks;
    if (s.state == 'Z' || s.state == 'X') continue;
    live_.push_back(s.pid);
    live_rss_bytes_ += s.rss_pages * static_cast<std::uint64_t>(page_bytes_);
    live_members_.push_back(std::move(s));
  }
  std::sort(live_.begin(), live_.end());
}

std::vector<int> ProcTree::SeenPids() const {
  std::vector<int> pids;
  pids.reserve(seen_.size() + 1);
  for (const auto& kv : seen_) pids.push_back(kv.first);
  if (!seen_.contains(main_pid_)) pids.push_back(main_pid_);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace vouch::leg_detail
