#include "util/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "util/atomic_write.h"
#include "util/bounded_file.h"

namespace vouch {

namespace {

// An unpredictable temporary name beside PATH, created with O_EXCL|O_NOFOLLOW: a file or
// symlink planted at any name (a shared fleet folder is shared by design) is never opened,
// followed or truncated; a name taken is skipped for another.
Result<int> CreateTemp(const std::string& path, std::string* tmp) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t r = 0;
    if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
      r = static_cast<std::uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          static_cast<std::uint64_t>(attempt);
    }
    *tmp = fmt::format("{}.tmp.{:016x}", path, r);
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      // named by the file asked for; the temporary name is an implementation detail
      return MakeError("cannot write {}: {} (creating {})", path, std::strerror(errno), *tmp);
    }
  }
  return MakeError("cannot write {}: 100 temporary names beside it were all taken", path);
}

}  // namespace

namespace {

Status WriteAll(int fd, std::string_view content, const std::string& path) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return MakeError("cannot write {}: {}{}", path, std::strerror(e),
                       e == ENOSPC ? " (the disk is full: free space and run again)" : "");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

Status WriteFileAtomic(const std::string& path, const std::string& content, FileSync sync) {
  return WriteFileAtomic(
      path, [&](const ChunkSink& put) { return put(content); }, sync);
}

Status WriteFileAtomic(const std::string& path,
                       const std::function<Status(const ChunkSink&)>& produce, FileSync sync) {
  std::string tmp;
  auto created = CreateTemp(path, &tmp);
  if (!created) return created.error();
  const int fd = *created;
  // Pieces are gathered up to 1 MiB before each write(2).
  std::string buffer;
  auto flush = [&] {
    Status st = WriteAll(fd, buffer, path);
    buffer.clear();
    return st;
  };
  Status st = produce([&](std::string_view piece) {
    if (buffer.size() + piece.size() > (1u << 20)) {
      if (auto f = flush(); !f) return f;
      if (piece.size() > (1u << 20)) return WriteAll(fd, piece, path);
    }
    buffer.append(piece);
    return OkStatus();
  });
  if (st) st = flush();
  if (!st) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
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

std::string CurrentDirOrEmpty() {
  std::error_code ec;
  std::filesystem::path here = std::filesystem::current_path(ec);
  return ec ? std::string() : here.string();
}

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return MakeError("cannot create directory {}: {}", path, ec.message());
  return OkStatus();
}

Result<std::vector<DirEntry>> ListDir(const std::string& path, bool follow,
                                      std::size_t max_entries) {
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return MakeError("cannot list {}: {}", path, std::strerror(errno));
  std::vector<DirEntry> out;
  alignas(8) char buf[8192];
  for (;;) {
    const ssize_t n = ::getdents64(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return MakeError("cannot list {}: {}", path, std::strerror(err));
    }
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
      at += d->d_reclen;
      const std::string_view name(d->d_name);
      if (name == "." || name == "..") continue;
      if (out.size() >= max_entries) {
        ::close(fd);
        return out;
      }
      unsigned char type = d->d_type;
      struct stat st {};
      if (type == DT_UNKNOWN && ::fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        type = S_ISLNK(st.st_mode)   ? DT_LNK
               : S_ISDIR(st.st_mode) ? DT_DIR
               : S_ISREG(st.st_mode) ? DT_REG
                                     : DT_UNKNOWN;
      out.push_back({std::string(name), type == DT_LNK   ? DirEntry::Type::kSymlink
                                        : type == DT_DIR ? DirEntry::Type::kDir
                                        : type == DT_REG ? DirEntry::Type::kFile
                                                         : DirEntry::Type::kOther});
    }
  }
  ::close(fd);
  return out;
}

Result<std::uint64_t> FreeDiskBytes(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0)
    return MakeError("cannot stat filesystem of {}: {}", path, std::strerror(errno));
  return static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace vouch
