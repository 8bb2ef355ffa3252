#include "util/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/bounded_file.h"

namespace vouch {

Status WriteFileAtomic(const std::string& path, const std::string& content, FileSync sync) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)  // named by the file asked for; the temporary name is an implementation detail
    return MakeError("cannot write {}: {} (creating {})", path, std::strerror(errno), tmp);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return MakeError("cannot write {}: {}{}", path, std::strerror(e),
                       e == ENOSPC ? " (the disk is full: free space and run again)" : "");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if ((sync == FileSync::kFsync && ::fsync(fd) != 0) || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return MakeError("cannot flush {}: {}", path, std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return MakeError("cannot rename {} to {}: {}", tmp, path, std::strerror(e));
  }
  return OkStatus();
}

Result<std::string> ReadFile(const std::string& path, std::uint64_t max_bytes) {
  return ReadBoundedFile(path, max_bytes);
}

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return MakeError("cannot create directory {}: {}", path, ec.message());
  return OkStatus();
}

Result<std::uint64_t> FreeDiskBytes(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0)
    return MakeError("cannot stat filesystem of {}: {}", path, std::strerror(errno));
  return static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace vouch
