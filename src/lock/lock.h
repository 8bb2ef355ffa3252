// The exclusive measurement lock: flock on a lock file that names its holder (pid,
// command, start time, host). One GPU job at a time; waiting has a timeout and says who
// holds the lock.
//
// The lock file is shared by every user of the GPU, so it lives in a shared folder, and
// vouch may run as root: opening it must not let another user aim vouch at a file of their
// choosing. It is opened without following a symbolic link (O_NOFOLLOW), never truncated
// on open, and refused unless it is a regular file with no other hard link, owned by the
// user or root; a file owned by another user is accepted only in a sticky folder owned by
// root or the user (like /tmp), where nobody else can replace it and writing into a peer's
// own lock file harms nobody. The folder itself must not let another user swap the file:
// owned by the user or root, and sticky when others may write to it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "util/result.h"

namespace vouch {

struct LockHolder {
  int pid = 0;
  std::string command;
  double start_unix_s = 0;
  std::string host;
};

class MeasureLock {
 public:
  // Called once, when the lock is found held and Acquire is about to wait: who holds it (when
  // the file says) and how long Acquire will wait. The caller says it to the user.
  using WaitFn = std::function<void(const std::optional<LockHolder>& holder, double timeout_s)>;
  // Waits up to TIMEOUT_S (0: try once), or until CANCELLED returns true (an interrupt).
  // The error names the holder.
  static Result<MeasureLock> Acquire(const std::string& path, const std::string& command,
                                     double timeout_s,
                                     const std::function<bool()>& cancelled = nullptr,
                                     const WaitFn& on_wait = {});
  MeasureLock(MeasureLock&& o) noexcept;
  MeasureLock& operator=(MeasureLock&&) = delete;
  MeasureLock(const MeasureLock&) = delete;
  ~MeasureLock();
  const std::string& path() const { return path_; }

 private:
  MeasureLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

struct LockState {
  bool held = false;
  std::optional<LockHolder> holder;  // who holds it (or last held it, when free)
};

Result<LockState> ReadLockState(const std::string& path);

// The lock every user of the machine's GPUs shares: /run/lock/vouch/vouch.lock (or
// /tmp/vouch/vouch.lock where /run/lock does not exist). Its folder is created on first use
// with mode 01777, as /tmp is; scripts/setup.sh has systemd-tmpfiles create it as root at
// boot so that no user owns it.
std::string DefaultLockPath();
std::string DescribeHolder(const LockHolder& h);

}  // namespace vouch
