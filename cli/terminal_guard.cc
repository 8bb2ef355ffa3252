#include "terminal_guard.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/escape.h"

namespace vouch::cli {
namespace {

std::FILE* raw_stderr = nullptr;

// One guarded descriptor. A buffered stream may cut a UTF-8 character in two between
// writes: its first bytes wait here for the rest.
struct Guard {
  int fd;
  std::string pending;
  bool closed = false;  // the reader went away (EPIPE): nothing more is written
};
Guard out_guard{1, {}}, err_guard{2, {}};

void WriteAll(Guard* g, std::string_view s) {
  while (!s.empty() && !g->closed) {
    const ssize_t n = ::write(g->fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) g->closed = true;  // closed_output.h: dropped, not an error
    if (n <= 0) return;  // what cannot be written is dropped; the run goes on
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

// How many bytes at the end of S start a UTF-8 character that is not complete yet.
std::size_t IncompleteTail(std::string_view s) {
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

// READY (whole characters) made safe and written: as it is when it needs no escape.
void WriteSafe(Guard* g, std::string_view ready) {
  if (TerminalVerbatim(ready))
    WriteAll(g, ready);
  else
    WriteAll(g, TerminalText(ready));
}

ssize_t GuardWrite(void* cookie, const char* buf, std::size_t size) {
  auto* g = static_cast<Guard*>(cookie);
  if (g->pending.empty()) {  // nothing waits: BUF is written without a copy
    const std::string_view in(buf, size);
    const std::size_t keep = IncompleteTail(in);
    WriteSafe(g, in.substr(0, size - keep));
    g->pending.assign(in.substr(size - keep));
    return static_cast<ssize_t>(size);
  }
  g->pending.append(buf, size);
  const std::size_t keep = IncompleteTail(g->pending);
  const std::string_view ready(g->pending.data(), g->pending.size() - keep);
  WriteSafe(g, ready);
  g->pending.erase(0, ready.size());
  return static_cast<ssize_t>(size);
}

// At exit: a character still cut short is shown as its bytes.
void FlushPending() {
  for (Guard* g : {&out_guard, &err_guard}) {
    std::fflush(g->fd == 1 ? stdout : stderr);
    if (!g->pending.empty()) WriteAll(g, TerminalText(g->pending));
    g->pending.clear();
  }
}

std::FILE* Open(Guard* g) {
  cookie_io_functions_t io{};
  io.write = GuardWrite;
  return ::fopencookie(g, "w", io);
}

}  // namespace

void GuardTerminalOutput() {
  if (raw_stderr) return;
  std::FILE* out = Open(&out_guard);
  std::FILE* err = Open(&err_guard);
  if (!out || !err) return;  // unguarded rather than silent; the renderers escape too
  std::fflush(stdout);
  std::fflush(stderr);
  // As the C library sets them: stdout line-buffered on a terminal and fully buffered
  // otherwise, stderr unbuffered.
  std::setvbuf(out, nullptr, ::isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
  std::setvbuf(err, nullptr, _IONBF, 0);
  raw_stderr = stderr;
  stdout = out;
  stderr = err;
  std::atexit(FlushPending);
}

std::FILE* RawStderr() { return raw_stderr ? raw_stderr : stderr; }

}  // namespace vouch::cli
