// Moves one stream of a leg from its pipe to a file (and optionally the terminal) with a
// fixed buffer: memory stays constant whatever the leg writes. Internal to src/leg.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "leg/executor.h"

namespace vouch::leg_detail {

class OutputPump {
 public:
  // PIPE_FD is the non-blocking read end (owned); FILE_FD the output file or -1 (owned);
  // TEE_FD vouch's stdout/stderr or -1 (not owned).
  OutputPump(int pipe_fd, int file_fd, int tee_fd, std::optional<std::uint64_t> cap_bytes,
             std::string path);
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Moves what the pipe holds now, up to about budget_bytes. Returns false once the pipe
  // reached end of file (all writers closed), true while it is still open.
  bool Pump(std::span<char> buffer, std::uint64_t budget_bytes);
  bool open() const { return pipe_fd_ >= 0; }
  int pipe_fd() const { return pipe_fd_; }
  // True once, on the call after a write error first happened.
  bool TakeNewWriteError();
  const StreamResult& result() const { return result_; }

 private:
  void ClosePipe();
  void Deliver(const char* data, std::uint64_t n);
  void RecordWriteError(int err);

  int pipe_fd_;
  int file_fd_;
  int tee_fd_;
  std::optional<std::uint64_t> cap_bytes_;
  bool splice_ok_;  // pipe -> file without a copy through user space
  bool file_failed_ = false;
  bool new_error_ = false;
  StreamResult result_;
};

}  // namespace vouch::leg_detail
