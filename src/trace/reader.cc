#include "trace/reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "trace/cupti_reader.h"
#include "trace/kineto_reader.h"
#include "trace/nsys_reader.h"
#include "util/bounded_file.h"

namespace vouch::trace {
namespace {

bool IsSqlite(const char* head, std::size_t n) {
  return n >= 16 && std::memcmp(head, "SQLite format 3", 16) == 0;
}

Result<Trace> ReadTraceFile(const BoundedFile& f, const std::string& path) {
  char head[512] = {};
  const ssize_t got = ::pread(f.fd(), head, sizeof head, 0);
  const std::size_t n = got > 0 ? static_cast<std::size_t>(got) : 0;
  if (IsSqlite(head, n)) return ReadNsysSqlite(path);
  if (LooksLikeCuptiTrace(std::string_view(head, n))) return ReadCuptiTrace(path);
  return ReadKinetoTrace(path);
}

// A pipe (`trace summarize <(zcat t.json.gz)`) can be read once: sniffing its format would
// consume it. It is copied to a temporary file (up to the trace cap) and read from there;
// errors name the pipe, not the copy.
Result<Trace> ReadTracePipe(BoundedFile& pipe) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmp = std::string(dir && *dir ? dir : "/tmp") + "/vouch-trace-XXXXXX";
  const int out = ::mkstemp(tmp.data());
  if (out < 0)
    return MakeError("{}: cannot create a temporary copy of the pipe in {}: {}", pipe.path(), tmp,
                     std::strerror(errno));
  std::uint64_t bytes = 0;
  auto copied = pipe.ReadChunks([&](std::string_view chunk) -> Status {
    bytes += chunk.size();
    while (!chunk.empty()) {
      ssize_t w = ::write(out, chunk.data(), chunk.size());
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        return MakeError("{}: cannot write {}: {}", pipe.path(), tmp, std::strerror(errno));
      chunk.remove_prefix(static_cast<std::size_t>(w));
    }
    return OkStatus();
  });
  ::close(out);
  // Nothing at all: a writer that wrote nothing, or a FIFO no writer had opened (opened without
  // waiting, it reads as ended at once): said so, not "the file is empty".
  if (copied && bytes == 0)
    copied = MakeError(
        "{}: the pipe gave no bytes (its writer wrote nothing, or no writer had opened this "
        "FIFO); expected a Kineto, nsys or vouch trace",
        pipe.path());
  Result<Trace> t = copied ? Result<Trace>(MakeError("")) : Result<Trace>(copied.error());
  if (copied) {
    auto f = BoundedFile::Open(tmp, kMaxTraceFileBytes);
    t = f ? ReadTraceFile(*f, tmp) : Result<Trace>(f.error());
  }
  ::unlink(tmp.c_str());
  if (t) {
    t->path = pipe.path();
    return t;
  }
  std::string msg = t.error().message;
  for (auto at = msg.find(tmp); at != std::string::npos; at = msg.find(tmp, at))
    msg.replace(at, tmp.size(), pipe.path());
  return Error{msg};
}

}  // namespace

Result<Trace> ReadTrace(const std::string& path) {
  // The bounded opener: no FIFO without a writer, no device, no directory, a size cap.
  auto f = BoundedFile::Open(path, kMaxTraceFileBytes, FileKinds::kRegularOrPipe);
  if (!f) return f.error();
  if (f->is_pipe()) return ReadTracePipe(*f);
  return ReadTraceFile(*f, path);
}

Result<Summary> SummarizeTrace(const std::string& path, const SummaryOptions& opt) {
  auto f = BoundedFile::Open(path, kMaxTraceFileBytes, FileKinds::kRegularOrPipe);
  if (!f) return f.error();
  if (!f->is_pipe()) {
    // As ReadTraceFile tells the formats apart; the two that fold their whole-trace summary
    // while they read take it from here.
    char head[512] = {};
    const ssize_t got = ::pread(f->fd(), head, sizeof head, 0);
    const std::size_t n = got > 0 ? static_cast<std::size_t>(got) : 0;
    if (IsSqlite(head, n)) return SummarizeNsysSqlite(path, opt);
    if (!LooksLikeCuptiTrace(std::string_view(head, n))) return SummarizeKinetoTrace(path, opt);
  }
  auto t = f->is_pipe() ? ReadTracePipe(*f) : ReadTraceFile(*f, path);
  if (!t) return t.error();
  return Summarize(*t, opt);
}

}  // namespace vouch::trace
