// The exclusive measurement lock: flock on a lock file that names its holder (pid,
// command, start time, host). One GPU job at a time; waiting has a timeout and says who
// holds the lock.
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
std::string DescribeHolder(const LockHolder& h);

}  // namespace vouch
