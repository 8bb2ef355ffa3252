#include "lock/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "util/host.h"

namespace vouch {
namespace {

std::optional<LockHolder> ReadHolder(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  off_t off = 0;
  while ((n = ::pread(fd, buf, sizeof buf, off)) > 0) {
    text.append(buf, static_cast<size_t>(n));
    off += n;
    if (text.size() > (1 << 20)) break;
  }
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  LockHolder h;
  h.pid = j.value("pid", 0);
  h.command = j.value("command", "");
  h.start_unix_s = j.value("start_unix_s", 0.0);
  h.host = j.value("host", "");
  return h;
}

}  // namespace

std::string DescribeHolder(const LockHolder& h) {
  return fmt::format("pid {} on {} since {} ({:.0f} s ago): {}", h.pid, h.host,
                     IsoTimeUtc(h.start_unix_s), UnixNowSeconds() - h.start_unix_s, h.command);
}

Result<MeasureLock> MeasureLock::Acquire(const std::string& path, const std::string& command,
                                         double timeout_s, const std::function<bool()>& cancelled,
                                         const WaitFn& on_wait) {
  // O_CLOEXEC: a leg must not inherit the lock, or a child that outlives it would hold it.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return MakeError("cannot open lock file {}: {}", path, std::strerror(errno));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool said = false;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int e = errno;
      ::close(fd);
      return MakeError("cannot lock {}: {}", path, std::strerror(e));
    }
    if (cancelled && cancelled()) {
      ::close(fd);
      return MakeError("interrupted while waiting for the measurement lock {}", path);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      auto h = ReadHolder(fd);
      ::close(fd);
      return MakeError(
          "the measurement lock {} is held by {}; waited {:g} s. Wait for it to finish, or raise "
          "--lock-timeout",
          path, h ? DescribeHolder(*h) : std::string("an unknown process"), timeout_s);
    }
    if (!said && on_wait) on_wait(ReadHolder(fd), timeout_s);
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  LockHolder h{::getpid(), command, UnixNowSeconds(), ReadHostInfo().hostname};
  std::string text = nlohmann::json{{"pid", h.pid},
                                    {"command", h.command},
                                    {"start_unix_s", h.start_unix_s},
                                    {"host", h.host}}
                         .dump() +
                     "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    int e = errno;
    ::close(fd);
    return MakeError("cannot write the holder into lock file {}: {}", path, std::strerror(e));
  }
  return MeasureLock(path, fd);
}

MeasureLock::MeasureLock(MeasureLock&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) {
  o.fd_ = -1;
}

MeasureLock::~MeasureLock() {
  if (fd_ >= 0) {
    ::close(fd_);  // releases the flock; the file keeps the last holder for `lock status`
  }
}

Result<LockState> ReadLockState(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return LockState{};
    return MakeError("cannot open lock file {}: {}", path, std::strerror(errno));
  }
  LockState s;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    s.held = true;
  } else {
    ::flock(fd, LOCK_UN);
  }
  s.holder = ReadHolder(fd);
  ::close(fd);
  return s;
}

}  // namespace vouch
