#include "closed_output.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>

namespace vouch::cli {
namespace {

struct Stream {
  int fd;
  std::atomic<bool> closed{false};
};
Stream g_out{1}, g_err{2};

ssize_t WriteAll(void* cookie, const char* buf, size_t n) {
  auto* s = static_cast<Stream*>(cookie);
  size_t off = 0;
  while (off < n && !s->closed.load()) {
    const ssize_t w = ::write(s->fd, buf + off, n - off);
    if (w >= 0) {
      off += static_cast<size_t>(w);
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EPIPE) {
      s->closed.store(true);  // the reader is gone: what is left is dropped, not an error
    } else {
      return off > 0 ? static_cast<ssize_t>(off) : -1;
    }
  }
  return static_cast<ssize_t>(n);
}

FILE* Open(Stream* s, int mode) {
  cookie_io_functions_t io{};
  io.write = WriteAll;
  FILE* f = ::fopencookie(s, "w", io);
  if (f) std::setvbuf(f, nullptr, mode, mode == _IONBF ? 0 : BUFSIZ);
  return f;
}

}  // namespace

void GuardClosedOutput() {
  std::signal(SIGPIPE, SIG_IGN);
  // stdout as the C library buffers it (by line on a terminal), stderr unbuffered.
  if (FILE* f = Open(&g_out, ::isatty(1) ? _IOLBF : _IOFBF)) {
    std::fflush(stdout);
    stdout = f;
  }
  if (FILE* f = Open(&g_err, _IONBF)) stderr = f;
}

bool OutputClosed(int fd) {
  return fd == 1 ? g_out.closed.load() : fd == 2 ? g_err.closed.load() : false;
}

}  // namespace vouch::cli
