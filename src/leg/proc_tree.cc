#include "leg/proc_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

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

void ProcTree::Scan() {
  ++generation_;
  UpdatePidRange();
  std::vector<ProcStat> candidates;
  if (DIR* dir = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const int pid = static_cast<int>(Field(e->d_name));
      if (!MaybeNew(pid) && !seen_.contains(pid)) continue;
      if (auto it = foreign_.find(pid); it != foreign_.end()) {
        it->second = generation_;
        continue;
      }
      ProcStat s;
      if (ReadProcStat(pid, &s)) candidates.push_back(std::move(s));
    }
    ::closedir(dir);
  }
  // Forget foreign pids that are gone, so a reused number is looked at again.
  std::erase_if(foreign_, [&](const auto& kv) { return kv.second != generation_; });

  // Membership to a fixed point: a child may be listed before its parent.
  // The environment is read once, and only for processes newer than the leg that no
  // cheaper rule claims.
  const int self = ::getpid();
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
