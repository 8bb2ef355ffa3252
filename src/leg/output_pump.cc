#include "leg/output_pump.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vouch::leg_detail {

OutputPump::OutputPump(int pipe_fd, int file_fd, int tee_fd, std::optional<std::uint64_t> cap_bytes,
                       std::string path)
    : pipe_fd_(pipe_fd),
      file_fd_(file_fd),
      tee_fd_(tee_fd),
      cap_bytes_(cap_bytes),
      splice_ok_(file_fd >= 0 && tee_fd < 0) {
  result_.path = std::move(path);
}

OutputPump::~OutputPump() {
  ClosePipe();
  if (file_fd_ >= 0) ::close(file_fd_);
}

void OutputPump::ClosePipe() {
  if (pipe_fd_ >= 0) ::close(pipe_fd_);
  pipe_fd_ = -1;
}

bool OutputPump::TakeNewWriteError() {
  const bool e = new_error_;
  new_error_ = false;
  return e;
}

void OutputPump::RecordWriteError(int err) {
  file_failed_ = true;
  new_error_ = true;
  result_.write_error = fmt::format("writing '{}': {} after {} bytes", result_.path,
                                    std::strerror(err), result_.written_bytes);
}

static std::uint64_t CapLeft(const std::optional<std::uint64_t>& cap, std::uint64_t written) {
  if (!cap) return UINT64_MAX;
  return *cap > written ? *cap - written : 0;
}

void OutputPump::Deliver(const char* data, std::uint64_t n) {
  result_.produced_bytes += n;
  if (tee_fd_ >= 0) {
    // The terminal is a courtesy: if it fails (closed, EPIPE), stop showing, keep capturing.
    for (std::uint64_t off = 0; off < n;) {
      const ssize_t w = ::write(tee_fd_, data + off, n - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        tee_fd_ = -1;
        break;
      }
      off += static_cast<std::uint64_t>(w);
    }
  }
  std::uint64_t to_file = 0;
  if (file_fd_ >= 0 && !file_failed_)
    to_file = std::min(n, CapLeft(cap_bytes_, result_.written_bytes));
  std::uint64_t off = 0;
  while (off < to_file) {
    const ssize_t w = ::write(file_fd_, data + off, to_file - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      RecordWriteError(errno);
      break;
    }
    if (w == 0) {
      RecordWriteError(ENOSPC);
      break;
    }
    off += static_cast<std::uint64_t>(w);
    result_.written_bytes += static_cast<std::uint64_t>(w);
  }
  // Without a file the stream is only counted; with one, what did not reach it is dropped.
  if (file_fd_ >= 0) result_.dropped_bytes += n - off;
}

bool OutputPump::Pump(std::span<char> buffer, std::uint64_t budget_bytes) {
  std::uint64_t moved = 0;
  while (pipe_fd_ >= 0 && moved < budget_bytes) {
    const std::uint64_t cap_left = CapLeft(cap_bytes_, result_.written_bytes);
    if (splice_ok_ && !file_failed_ && cap_left > 0) {
      const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(cap_left, 1 << 20));
      const ssize_t n =
          ::splice(pipe_fd_, nullptr, file_fd_, nullptr, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        result_.produced_bytes += static_cast<std::uint64_t>(n);
        result_.written_bytes += static_cast<std::uint64_t>(n);
        moved += static_cast<std::uint64_t>(n);
        continue;
      }
      if (n == 0) {
        ClosePipe();
        return false;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return true;
      if (errno == EINVAL || errno == ENOSYS) {
        splice_ok_ = false;  // this file cannot take a splice: copy instead
        continue;
      }
      // A write-side error (ENOSPC, EIO, EFBIG): the pipe still holds the bytes; they are
      // read and counted as dropped below.
      RecordWriteError(errno);
      continue;
    }
    const ssize_t n = ::read(pipe_fd_, buffer.data(), buffer.size());
    if (n > 0) {
      Deliver(buffer.data(), static_cast<std::uint64_t>(n));
      moved += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) {
      ClosePipe();
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return true;
    // A read error on our own pipe should not happen; treat it as the end.
    ClosePipe();
    return false;
  }
  return pipe_fd_ >= 0;
}

}  // namespace vouch::leg_detail
