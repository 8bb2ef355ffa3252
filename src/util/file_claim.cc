#include "util/file_claim.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vouch {

FileClaim::FileClaim(FileClaim&& o) noexcept
    : fd_(o.fd_), path_(std::move(o.path_)), created_(o.created_) {
  o.fd_ = -1;
  o.created_ = false;
}

FileClaim& FileClaim::operator=(FileClaim&& o) noexcept {
  if (this != &o) {
    Release();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    created_ = o.created_;
    o.fd_ = -1;
    o.created_ = false;
  }
  return *this;
}

FileClaim::~FileClaim() { Release(); }

void FileClaim::Release() {
  if (fd_ < 0) return;
  // Removed only while PATH is still the empty file this claim created (not one renamed over
  // it since).
  struct stat held {
  }, now{};
  if (created_ && ::fstat(fd_, &held) == 0 && ::lstat(path_.c_str(), &now) == 0 &&
      held.st_ino == now.st_ino && held.st_dev == now.st_dev && now.st_size == 0)
    ::unlink(path_.c_str());
  ::close(fd_);  // drops the flock
  fd_ = -1;
}

Result<FileClaim> FileClaim::Claim(const std::string& path, bool overwrite,
                                   const std::string& what) {
  FileClaim c;
  c.path_ = path;
  c.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  c.created_ = c.fd_ >= 0;
  if (c.fd_ < 0 && errno == EEXIST)
    c.fd_ = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (c.fd_ < 0)
    return MakeError("cannot claim {} for a {}: {}", path, what,
                     errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  struct stat st {};
  if (::fstat(c.fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return MakeError("cannot claim {} for a {}: it is not a regular file", path, what);
  if (::flock(c.fd_, LOCK_EX | LOCK_NB) != 0)
    return errno == EWOULDBLOCK
               ? MakeError(
                     "{} is claimed by another vouch command that is still running (it will "
                     "write its {} there); give another file, or wait for that command to end",
                     path, what)
               : MakeError("cannot claim {} for a {}: flock: {}", path, what, std::strerror(errno));
  if (!c.created_ && st.st_size > 0 && !overwrite)
    return MakeError(
        "{} already exists: a new {} would replace it; give another file, or pass --overwrite "
        "to replace it",
        path, what);
  // An empty file nobody holds: the claim of a command that was killed; it is taken over.
  if (!c.created_ && st.st_size == 0) c.created_ = true;
  return c;
}

}  // namespace vouch
