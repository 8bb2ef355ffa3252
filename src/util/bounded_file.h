// The one way vouch opens a file it did not write itself (metric files, the metrics channel,
// records, baselines, samples, ncu CSV, traces): without blocking, and only a regular file
// of a bounded size. A FIFO with no writer, /dev/zero, a directory or a symlink to any of
// them gives an error naming the file and what it is, never a hang or an unbounded read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace vouch {

// Caps per use, stated once. A file past its cap is refused with its size and the cap.
inline constexpr std::uint64_t kMaxMetricsFileBytes = 256ull << 20;  // outputs, channel
inline constexpr std::uint64_t kMaxRecordFileBytes = 512ull << 20;   // record, leg, window
inline constexpr std::uint64_t kMaxSamplesFileBytes = 1ull << 30;    // samples.jsonl
inline constexpr std::uint64_t kMaxSmallFileBytes = 16ull << 20;     // baselines, rules
inline constexpr std::uint64_t kMaxTraceFileBytes = 64ull << 30;     // Kineto, nsys, ncu
inline constexpr std::uint64_t kNoSizeCap = ~std::uint64_t{0};       // artifacts to hash

// What MODE is, in words ("a FIFO (named pipe)", "a directory"), for a file that is not regular.
const char* DescribeFileKind(unsigned mode);

enum class FileKinds {
  kRegular,        // only a regular file
  kRegularOrPipe,  // also a pipe or FIFO (`<(zcat f)`), read once up to the cap
};

class BoundedFile {
 public:
  // Opens PATH read-only with O_NONBLOCK|O_CLOEXEC|O_NOCTTY (so a FIFO or a terminal cannot
  // block the open), then fstat()s the descriptor: anything but a regular file (or a pipe,
  // where KINDS allows it) and any regular file above MAX_BYTES is an error naming PATH.
  static Result<BoundedFile> Open(const std::string& path, std::uint64_t max_bytes,
                                  FileKinds kinds = FileKinds::kRegular);

  BoundedFile(BoundedFile&& o) noexcept;
  BoundedFile& operator=(BoundedFile&& o) noexcept;
  BoundedFile(const BoundedFile&) = delete;
  BoundedFile& operator=(const BoundedFile&) = delete;
  ~BoundedFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool is_pipe() const { return pipe_; }
  // Size at open time (0 for a pipe).
  std::uint64_t size() const { return size_; }
  // Gives the descriptor to the caller (e.g. gzdopen), which then closes it.
  int Release();

  // Reads from the current position to the end in chunks, handing each to SINK; refuses a
  // file that grows (or a pipe that delivers) more than the cap. A pipe that delivers nothing
  // for `kPipeIdleSeconds` is an error, not a wait for ever.
  Status ReadChunks(const std::function<Status(std::string_view)>& sink);
  // The whole content.
  Result<std::string> ReadAll();
  // The whole content into BUF, from its start; the length read. BUF grows only when the file
  // does not fit and is never shrunk: the bytes past the length are left as they were, so a
  // buffer kept for the next file is neither zeroed nor paged in again.
  Result<std::size_t> ReadInto(std::string& buf);

  static constexpr int kPipeIdleSeconds = 60;

 private:
  BoundedFile(std::string path, int fd, std::uint64_t size, std::uint64_t max, bool pipe)
      : path_(std::move(path)), fd_(fd), size_(size), max_(max), pipe_(pipe) {}
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t max_ = 0;
  bool pipe_ = false;
};

// Opens and reads a whole regular file of at most MAX_BYTES.
Result<std::string> ReadBoundedFile(const std::string& path, std::uint64_t max_bytes,
                                    FileKinds kinds = FileKinds::kRegular);

// "1 GiB", "256 MiB", "2.1 GiB": a size for an error message.
std::string DescribeSize(std::uint64_t bytes);

}  // namespace vouch
