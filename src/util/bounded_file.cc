#include "util/bounded_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace vouch {

const char* DescribeFileKind(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string DescribeSize(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} bytes", bytes);
  if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
    return fmt::format("{} {}", static_cast<std::uint64_t>(v), units[u]);
  return fmt::format("{:.1f} {}", v, units[u]);
}

Result<BoundedFile> BoundedFile::Open(const std::string& path, std::uint64_t max_bytes,
                                      FileKinds kinds) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return MakeError("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return MakeError("{}: cannot stat: {}", path, std::strerror(e));
  }
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !(pipe && kinds == FileKinds::kRegularOrPipe)) {
    ::close(fd);
    return MakeError("{}: is {}; give a regular file", path, DescribeFileKind(st.st_mode));
  }
  const auto size = pipe ? std::uint64_t{0} : static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    return MakeError("{}: is {}, the limit is {}", path, DescribeSize(size),
                     DescribeSize(max_bytes));
  }
  // Regular files ignore O_NONBLOCK; a pipe keeps it and is polled with a bound.
  return BoundedFile(path, fd, size, max_bytes, pipe);
}

BoundedFile::BoundedFile(BoundedFile&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), size_(o.size_), max_(o.max_), pipe_(o.pipe_) {
  o.fd_ = -1;
}

BoundedFile& BoundedFile::operator=(BoundedFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    size_ = o.size_;
    max_ = o.max_;
    pipe_ = o.pipe_;
    o.fd_ = -1;
  }
  return *this;
}

BoundedFile::~BoundedFile() {
  if (fd_ >= 0) ::close(fd_);
}

int BoundedFile::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Status BoundedFile::ReadChunks(const std::function<Status(std::string_view)>& sink) {
  if (fd_ < 0) return MakeError("{}: not open", path_);
  // A regular file's buffer fits it (and the read that finds its end): a 1 MiB buffer zeroed
  // for every small file was a tenth of `vouch fleet merge`, which reads two per node.
  const std::size_t want =
      pipe_ ? std::size_t{1} << 20
            : static_cast<std::size_t>(std::min<std::uint64_t>(
                  std::uint64_t{1} << 20, std::max<std::uint64_t>(size_ + 1, 4096)));
  // Not zeroed (read() fills what is used): zeroing it was 5 % of `vouch fleet merge`.
  const auto buf = std::make_unique_for_overwrite<char[]>(want);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd_, buf.get(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && pipe_) {
        pollfd p{fd_, POLLIN, 0};
        const int r = ::poll(&p, 1, kPipeIdleSeconds * 1000);
        if (r == 0)
          return MakeError("{}: the pipe gave no data for {} s; is its writer stuck?", path_,
                           kPipeIdleSeconds);
        if (r < 0 && errno != EINTR)
          return MakeError("{}: cannot wait for the pipe: {}", path_, std::strerror(errno));
        continue;
      }
      return MakeError("{}: cannot read: {}", path_, std::strerror(errno));
    }
    if (n == 0) return OkStatus();
    total += static_cast<std::uint64_t>(n);
    if (total > max_)
      return MakeError("{}: is over the limit of {} (it grew while being read, or is a pipe)",
                       path_, DescribeSize(max_));
    if (auto s = sink(std::string_view(buf.get(), static_cast<std::size_t>(n))); !s) return s;
  }
}

Result<std::string> BoundedFile::ReadAll() {
  std::string out;
  auto n = ReadInto(out);
  if (!n) return n.error();
  out.resize(*n);
  return out;
}

Result<std::size_t> BoundedFile::ReadInto(std::string& buf) {
  if (pipe_) {
    std::string got;
    auto s = ReadChunks([&](std::string_view chunk) {
      got.append(chunk);
      return OkStatus();
    });
    if (!s) return s.error();
    buf = std::move(got);
    return buf.size();
  }
  if (fd_ < 0) return MakeError("{}: not open", path_);
  // A regular file is read straight into BUF, sized for the file and the read that finds its
  // end: a buffer between the two was a copy and a second set of fresh pages per file (a
  // quarter of `vouch fleet merge`, which reads two files per node).
  const std::uint64_t most = max_ < kNoSizeCap ? max_ + 1 : kNoSizeCap;  // finds "over the cap"
  const auto fits = static_cast<std::size_t>(std::min<std::uint64_t>(size_ + 1, most));
  if (buf.size() < fits) buf.resize(fits);
  std::size_t len = 0;
  for (;;) {
    if (len == buf.size())
      buf.resize(static_cast<std::size_t>(std::min<std::uint64_t>(2 * buf.size() + 4096, most)));
    const ssize_t n = ::read(fd_, buf.data() + len, buf.size() - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("{}: cannot read: {}", path_, std::strerror(errno));
    }
    if (n == 0) return len;
    const bool short_read = static_cast<std::size_t>(n) < buf.size() - len;
    len += static_cast<std::size_t>(n);
    if (len > max_)
      return MakeError("{}: is over the limit of {} (it grew while being read, or is a pipe)",
                       path_, DescribeSize(max_));
    // A short read that ends at the size fstat gave is the end of a regular file: the read
    // that would return 0 is not made (a syscall per file: `history add` reads four a
    // record). A file whose size says nothing (procfs: 0) reads on to the 0.
    if (short_read && len == size_ && size_ > 0) return len;
  }
}

Result<std::string> ReadBoundedFile(const std::string& path, std::uint64_t max_bytes,
                                    FileKinds kinds) {
  auto f = BoundedFile::Open(path, max_bytes, kinds);
  if (!f) return f.error();
  return f->ReadAll();
}

}  // namespace vouch
