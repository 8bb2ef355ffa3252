#include "lock/lock.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "util/escape.h"
#include "util/host.h"
#include "util/json_io.h"
#include "util/redact.h"

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
  auto parsed = ParseJson(text, "lock file");
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const nlohmann::json& j = *parsed;
  LockHolder h;
  auto str = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto it = j.find("pid");
  if (it != j.end() && it->is_number_integer()) h.pid = it->get<int>();
  it = j.find("start_unix_s");
  if (it != j.end() && it->is_number()) h.start_unix_s = it->get<double>();
  h.command = RedactCommandLine(str("command"));  // a file written before redaction too
  h.host = str("host");
  return h;
}

std::string Owner(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return fmt::format("{} (uid {})", pw->pw_name, uid);
  return fmt::format("uid {}", uid);
}

// The folder of the lock file must not let another user replace the file.
Status CheckLockDir(const std::string& dir, const std::string& path, bool* shared_sticky) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return MakeError("cannot use lock file {}: its folder {}: {}", path, dir, std::strerror(errno));
  if (S_ISLNK(st.st_mode)) {
    // A link to a folder is fine when it is ours or root's (/var/run -> /run); then judge
    // the folder it points to.
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return MakeError(
          "refusing lock file {}: its folder {} is a symbolic link owned by {}, who could point "
          "it anywhere; give --lock-file in a folder of your own",
          path, dir, Owner(st.st_uid));
    if (::stat(dir.c_str(), &st) != 0)
      return MakeError("cannot use lock file {}: its folder {}: {}", path, dir,
                       std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return MakeError("cannot use lock file {}: {} is not a folder", path, dir);
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return MakeError(
        "refusing lock file {}: its folder {} belongs to {}, who can replace any file in it; "
        "ask root to create the folder (install -d -m 1777 {}) or give --lock-file",
        path, dir, Owner(st.st_uid), dir);
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if (others_write && !sticky)
    return MakeError(
        "refusing lock file {}: its folder {} is writable by others and not sticky (mode {:o}), "
        "so anyone could replace the file; chmod +t {} or give --lock-file",
        path, dir, st.st_mode & 07777, dir);
  *shared_sticky = sticky;
  return OkStatus();
}

// The open lock file must be what it claims: a plain file of ours (see lock.h).
Status CheckLockFile(int fd, const std::string& path, bool shared_sticky) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return MakeError("cannot use lock file {}: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return MakeError(
        "refusing lock file {}: it is not a regular file (a FIFO, device or folder); remove it "
        "or give another --lock-file",
        path);
  if (st.st_nlink != 1)
    return MakeError(
        "refusing lock file {}: it has {} hard links, so writing it would write another file "
        "too; remove it or give another --lock-file",
        path, st.st_nlink);
  if (st.st_uid != ::geteuid() && st.st_uid != 0 && !shared_sticky)
    return MakeError(
        "refusing lock file {}: it belongs to {} and its folder is not a shared sticky one; "
        "remove it or give another --lock-file",
        path, Owner(st.st_uid));
  return OkStatus();
}

std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Opens PATH for the lock; CREATE makes it (mode 0666: every user of the GPU must be able
// to take it) when it does not exist, and the default folder when that is missing.
Result<int> OpenLockFile(const std::string& path, bool create, int* flags_used) {
  const std::string dir = DirOf(path);
  if (create && path == DefaultLockPath()) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) {
      if (::mkdir(dir.c_str(), 01777) == 0) ::chmod(dir.c_str(), 01777);  // past the umask
    }
  }
  struct stat dir_st {};
  if (!create && ::lstat(dir.c_str(), &dir_st) != 0 && errno == ENOENT) return -1;  // no lock
  bool shared_sticky = false;
  if (auto s = CheckLockDir(dir, path, &shared_sticky); !s) return s.error();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOCTTY: nor take a terminal.
  const int base = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  int mode = create ? O_RDWR : O_RDONLY;
  int fd = ::open(path.c_str(), mode | base);
  if (fd < 0 && errno == ENOENT && create) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | base, 0666);
    if (fd >= 0) ::fchmod(fd, 0666);
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | base);  // lost a race
  }
  if (fd < 0 && errno == EACCES && create) {
    // Another user's lock file that we may not write: flock works on a read-only file;
    // only the holder line cannot be written.
    mode = O_RDONLY;
    fd = ::open(path.c_str(), mode | base);
  }
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT && !create) return -1;
    if (e == ELOOP)
      return MakeError(
          "refusing lock file {}: it is a symbolic link, and vouch never follows one (another "
          "user could aim it at a file of yours); remove it or give another --lock-file",
          path);
    return MakeError("cannot open lock file {}: {}", path, std::strerror(e));
  }
  if (auto s = CheckLockFile(fd, path, shared_sticky); !s) {
    ::close(fd);
    return s.error();
  }
  *flags_used = mode;
  return fd;
}

}  // namespace

std::string DefaultLockPath() {
  struct stat st {};
  if (::stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode)) return "/run/lock/vouch/vouch.lock";
  return "/tmp/vouch/vouch.lock";
}

std::string DescribeHolder(const LockHolder& h) {
  // Another user's file: its host and command are shown, never obeyed, by a terminal.
  return fmt::format("pid {} on {} since {} ({:.0f} s ago): {}", h.pid, TerminalSafe(h.host),
                     IsoTimeUtc(h.start_unix_s), UnixNowSeconds() - h.start_unix_s,
                     TerminalSafe(h.command));
}

Result<MeasureLock> MeasureLock::Acquire(const std::string& path, const std::string& command,
                                         double timeout_s, const std::function<bool()>& cancelled,
                                         const WaitFn& on_wait) {
  // O_CLOEXEC: a leg must not inherit the lock, or a child that outlives it would hold it.
  int mode = O_RDWR;
  auto opened = OpenLockFile(path, true, &mode);
  if (!opened) return opened.error();
  const int fd = *opened;
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
  if (mode == O_RDONLY) return MeasureLock(path, fd);  // held; the holder line is another user's
  LockHolder h{::getpid(), RedactCommandLine(command), UnixNowSeconds(), ReadHostInfo().hostname};
  std::string text = DumpJson(nlohmann::json{{"pid", h.pid},
                                             {"command", h.command},
                                             {"start_unix_s", h.start_unix_s},
                                             {"host", h.host}}) +
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
  int mode = O_RDONLY;
  auto opened = OpenLockFile(path, false, &mode);
  if (!opened) return opened.error();
  const int fd = *opened;
  if (fd < 0) return LockState{};  // no lock file: free
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
