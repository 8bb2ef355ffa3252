// libvouch_cupti.so: a CUPTI injection tracer. Any CUDA process loads it with
//   CUDA_INJECTION64_PATH=/path/libvouch_cupti.so  (the driver calls InitializeInjection at cuInit)
//   NVTX_INJECTION64_PATH=/path/libvouch_cupti.so  (NVTX calls InitializeInjectionNvtx2; we hand
//                                                   it to CUPTI, which records the ranges)
//   VOUCH_GPU_TRACE=/path/trace.%p.jsonl          (output; %p is the process id)
// and writes JSON lines (docs/gpu-trace.md; src/trace/cupti_reader.h reads them):
//   {"type":"header",...}            first line: pid, command line, clock, CUPTI version
//   {"t":"n","id":N,"v":"name"}      a name, before its first use
//   {"t":"k",...} {"t":"c",...} {"t":"m",...}  kernel (CONCURRENT_KERNEL), memcpy, memset
//   {"t":"a",...}                    a launch API call (runtime or driver): only with
//                                    VOUCH_GPU_TRACE_API=on (off by default; options.h)
//   {"t":"ms",...} {"t":"me",...}    an NVTX range's start and end (push/pop or start/end)
//   {"t":"drop","n":N}               records CUPTI dropped (counted, never silent)
//   {"t":"signal","sig":N}           a fatal signal arrived; what follows is the last flush
//   {"type":"footer",...}            written only at a clean exit: its absence means partial
// Timestamps are nanoseconds of CLOCK_REALTIME (unix time, the clock vouch's sampler and the
// metrics channel use): the tracer registers a CLOCK_REALTIME timestamp callback with CUPTI,
// which then interpolates GPU timestamps onto it; the header records the offset measured at
// init for the reader to apply should the callback not have been accepted.
// Only CONCURRENT_KERNEL is enabled, never CUPTI_ACTIVITY_KIND_KERNEL (it serialises kernels).
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "counter.h"
#include "loader.h"
#include "options.h"

#define VOUCH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using vouch_cupti::Api;
using vouch_cupti::AppendEscaped;

constexpr int kFormatVersion = 1;

std::uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t CUPTIAPI TimestampCallback() { return RealtimeNs(); }

struct Counts {
  std::uint64_t kernels = 0, graph_kernels = 0, memcpys = 0, memsets = 0, api = 0, markers = 0;
  std::uint64_t kernels_incomplete = 0;  // kernel records CUPTI could not time (in incomplete)
  std::uint64_t incomplete = 0, other = 0, dropped = 0, buffers = 0;
};

// All output goes through one writer: CUPTI's worker thread delivers buffers, the thread that
// calls cuptiActivityFlushAll (atexit, a signal) may too.
class Writer {
 public:
  bool Open(const std::string& path);
  void Line(const std::string& s);  // appends and writes out (used for header/footer/signal)
  void Buffer(CUcontext ctx, std::uint32_t stream, std::uint8_t* buf, std::size_t valid);
  void Footer();
  Counts counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  const std::string& path() const { return path_; }

 private:
  std::uint32_t NameId(const char* name, bool demangle);
  void Record(const CUpti_Activity* rec);
  void WriteOut();

  std::mutex mu_;
  bool closed_ = false;  // the footer is written: nothing may follow it
  int fd_ = -1;
  std::string path_;
  std::string out_;
  std::unordered_map<std::string, std::uint32_t> names_;
  Counts counts_;
};

Writer* g_writer = nullptr;
bool g_counting = false;  // the launch counter runs (counter.h): the footer carries its counts
pid_t g_pid = 0;
std::atomic<bool> g_finished{false};
// 2 MiB: CUPTI hands a full buffer back from its own worker thread, so a process that is
// killed (SIGKILL, which no handler sees) keeps every buffer that filled; at 5,000 launches/s
// one fills about every second.
std::size_t g_buffer_bytes = 2u << 20;
// Built with -DVOUCH_CUPTI_DISCARD (bench/cupti/screen.sh only): records are counted, never
// formatted or written, to measure what the formatting costs the traced process.
#ifdef VOUCH_CUPTI_DISCARD
constexpr bool kDiscard = true;
#else
constexpr bool kDiscard = false;
#endif
constexpr int kSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT};
struct sigaction g_old[65];

bool Writer::Open(const std::string& path) {
  path_ = path;
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == EEXIST) {
    // Another process of the same program (or an earlier run) has this name: never mix two
    // processes in one file. The %p form avoids this; say where this one went.
    path_ = path + "." + std::to_string(getpid());
    std::fprintf(stderr, "vouch_cupti: %s exists; writing %s\n", path.c_str(), path_.c_str());
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) {
    std::fprintf(stderr, "vouch_cupti: cannot open %s: %s; not tracing\n", path_.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

void Writer::WriteOut() {
  std::size_t off = 0;
  while (off < out_.size()) {
    ssize_t n = write(fd_, out_.data() + off, out_.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // disk full or closed: the footer will be missing, the reader says partial
    }
    off += static_cast<std::size_t>(n);
  }
  out_.clear();
}

void Writer::Line(const std::string& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;  // the heartbeat's last line, racing the footer
  out_ += s;
  out_ += '\n';
  WriteOut();
}

std::uint32_t Writer::NameId(const char* name, bool demangle) {
  std::string key = name ? name : "";
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace(key, id);
  std::string shown = key;
  if (demangle && key.size() > 2 && key[0] == '_' && key[1] == 'Z') {
    int status = 0;
    char* d = abi::__cxa_demangle(key.c_str(), nullptr, nullptr, &status);
    if (status == 0 && d) shown = d;
    std::free(d);
  }
  out_ += "{\"t\":\"n\",\"id\":" + std::to_string(id) + ",\"v\":";
  AppendEscaped(&out_, shown.c_str());
  out_ += "}\n";
  return id;
}

void Writer::Record(const CUpti_Activity* rec) {
  char buf[512];
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (k->end < k->start || k->start == 0) {
        ++counts_.incomplete;
        if (k->graphId == 0) ++counts_.kernels_incomplete;
        return;
      }
      std::uint32_t n = NameId(k->name, true);
      int len = std::snprintf(
          buf, sizeof buf,
          "{\"t\":\"k\",\"s\":%" PRIu64 ",\"e\":%" PRIu64
          ",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"corr\":%u,\"n\":%u,\"grid\":[%d,%d,%d],"
          "\"block\":[%d,%d,%d]",
          k->start, k->end, k->deviceId, k->contextId, k->streamId, k->correlationId, n, k->gridX,
          k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ);
      out_.append(buf, static_cast<std::size_t>(len));
      if (k->graphId != 0) {
        len = std::snprintf(buf, sizeof buf, ",\"gid\":%u,\"gnode\":%" PRIu64, k->graphId,
                            k->graphNodeId);
        out_.append(buf, static_cast<std::size_t>(len));
        ++counts_.graph_kernels;
      }
      out_ += "}\n";
      ++counts_.kernels;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      if (c->end < c->start || c->start == 0) {
        ++counts_.incomplete;
        return;
      }
      int len = std::snprintf(buf, sizeof buf,
                              "{\"t\":\"c\",\"s\":%" PRIu64 ",\"e\":%" PRIu64
                              ",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"corr\":%u,\"bytes\":%" PRIu64
                              ",\"kind\":%u",
                              c->start, c->end, c->deviceId, c->contextId, c->streamId,
                              c->correlationId, c->bytes, static_cast<unsigned>(c->copyKind));
      out_.append(buf, static_cast<std::size_t>(len));
      if (c->graphId != 0) {
        len = std::snprintf(buf, sizeof buf, ",\"gid\":%u,\"gnode\":%" PRIu64, c->graphId,
                            c->graphNodeId);
        out_.append(buf, static_cast<std::size_t>(len));
      }
      out_ += "}\n";
      ++counts_.memcpys;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      if (m->end < m->start || m->start == 0) {
        ++counts_.incomplete;
        return;
      }
      int len = std::snprintf(buf, sizeof buf,
                              "{\"t\":\"m\",\"s\":%" PRIu64 ",\"e\":%" PRIu64
                              ",\"dev\":%u,\"ctx\":%u,\"str\":%u,\"corr\":%u,\"bytes\":%" PRIu64,
                              m->start, m->end, m->deviceId, m->contextId, m->streamId,
                              m->correlationId, m->bytes);
      out_.append(buf, static_cast<std::size_t>(len));
      if (m->graphId != 0) {
        len = std::snprintf(buf, sizeof buf, ",\"gid\":%u,\"gnode\":%" PRIu64, m->graphId,
                            m->graphNodeId);
        out_.append(buf, static_cast<std::size_t>(len));
      }
      out_ += "}\n";
      ++counts_.memsets;
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      bool driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      const char* name = nullptr;
      Api().cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
                                 a->cbid, &name);
      std::uint32_t n = NameId(name ? name : "?", false);
      int len = std::snprintf(buf, sizeof buf,
                              "{\"t\":\"a\",\"s\":%" PRIu64 ",\"e\":%" PRIu64
                              ",\"pid\":%u,\"tid\":%u,\"corr\":%u,\"cb\":%u,\"n\":%u,\"drv\":%d,"
                              "\"rc\":%u}\n",
                              a->start, a->end, a->processId, a->threadId, a->correlationId,
                              static_cast<unsigned>(a->cbid), n, driver ? 1 : 0, a->returnValue);
      out_.append(buf, static_cast<std::size_t>(len));
      ++counts_.api;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      std::uint64_t tid = 0;
      if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
          m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        tid = m->objectId.pt.threadId;
      else
        tid = m->objectId.dcs.streamId;
      ++counts_.markers;
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        std::uint32_t n = NameId(m->name ? m->name : "", false);
        int len =
            std::snprintf(buf, sizeof buf,
                          "{\"t\":\"ms\",\"id\":%u,\"ts\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"n\":%u",
                          m->id, m->timestamp, tid, n);
        out_.append(buf, static_cast<std::size_t>(len));
        if (m->domain && *m->domain) {
          out_ += ",\"dom\":";
          AppendEscaped(&out_, m->domain);
        }
        out_ += "}\n";
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        int len = std::snprintf(buf, sizeof buf,
                                "{\"t\":\"me\",\"id\":%u,\"ts\":%" PRIu64 ",\"tid\":%" PRIu64 "}\n",
                                m->id, m->timestamp, tid);
        out_.append(buf, static_cast<std::size_t>(len));
      } else {
        std::uint32_t n = NameId(m->name ? m->name : "", false);
        int len = std::snprintf(buf, sizeof buf,
                                "{\"t\":\"mi\",\"id\":%u,\"ts\":%" PRIu64 ",\"tid\":%" PRIu64
                                ",\"n\":%u}\n",
                                m->id, m->timestamp, tid, n);
        out_.append(buf, static_cast<std::size_t>(len));
      }
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      std::string line = "{\"t\":\"dev\",\"id\":" + std::to_string(d->id) + ",\"name\":";
      AppendEscaped(&line, d->name);
      line += ",\"sms\":" + std::to_string(d->numMultiprocessors) +
              ",\"cc\":" + std::to_string(d->computeCapabilityMajor) + "." +
              std::to_string(d->computeCapabilityMinor) + "}\n";
      out_ += line;
      return;
    }
    default:
      ++counts_.other;
      return;
  }
}

void Writer::Buffer(CUcontext ctx, std::uint32_t stream, std::uint8_t* buf, std::size_t valid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;  // a buffer CUPTI delivers during teardown, after the clean exit's footer
  ++counts_.buffers;
  CUpti_Activity* rec = nullptr;
  while (Api().cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
    if (kDiscard) {
      ++counts_.other;
      continue;
    }
    Record(rec);
    if (out_.size() > (1u << 20)) WriteOut();
  }
  std::size_t dropped = 0;
  if (Api().cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    counts_.dropped += dropped;
    out_ += "{\"t\":\"drop\",\"n\":" + std::to_string(dropped) + "}\n";
  }
  WriteOut();
}

void Writer::Footer() {
  std::lock_guard<std::mutex> lock(mu_);
  const Counts& c = counts_;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"type\":\"footer\",\"end_unix_ns\":%" PRIu64 ",\"kernels\":%" PRIu64
                ",\"graph_kernels\":%" PRIu64 ",\"memcpys\":%" PRIu64 ",\"memsets\":%" PRIu64
                ",\"api\":%" PRIu64 ",\"markers\":%" PRIu64 ",\"incomplete\":%" PRIu64
                ",\"other\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"buffers\":%" PRIu64,
                RealtimeNs(), c.kernels, c.graph_kernels, c.memcpys, c.memsets, c.api, c.markers,
                c.incomplete, c.other, c.dropped, c.buffers);
  out_ += buf;
  if (g_counting) {
    // The launches the tracer counted and the records of those kernels it received: fewer
    // records means another CUPTI client took them (gputrace/trust.h).
    std::snprintf(buf, sizeof buf,
                  ",\"kernel_launches\":%" PRIu64 ",\"graph_launches\":%" PRIu64
                  ",\"kernel_records\":%" PRIu64,
                  vouch_cupti::KernelLaunches(), vouch_cupti::GraphLaunches(),
                  c.kernels - c.graph_kernels + c.kernels_incomplete);
    out_ += buf;
  }
  out_ += "}\n";
  WriteOut();
  closed_ = true;  // in the same critical section: no buffer lands after the footer
}

void CUPTIAPI BufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  // CUPTI wants 8-byte alignment; aligned_alloc gives it. A failed allocation means CUPTI
  // drops records, which it then counts (cuptiActivityGetNumDroppedRecords).
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, g_buffer_bytes));
  *size = *buffer ? g_buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                              std::size_t /*size*/, std::size_t valid) {
  if (g_writer && getpid() == g_pid) g_writer->Buffer(ctx, stream, buffer, valid);
  std::free(buffer);
}

// CUPTI's own periodic flush returns only full buffers; this thread hands over the completed
// records of partly filled ones every VOUCH_GPU_TRACE_FLUSH_MS, so a process that dies keeps
// all but its last moments. g_flush_mu keeps a flush from running into the footer.
std::mutex g_flush_mu;

void Flusher(long period_ms) {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    std::lock_guard<std::mutex> lock(g_flush_mu);
    if (g_finished.load() || getpid() != g_pid) return;
    Api().cuptiActivityFlushAll(0);
  }
}

void HeartbeatLine(const std::string& line) {
  if (g_writer && getpid() == g_pid) g_writer->Line(line);
}

void Finish() {
  if (!g_writer || getpid() != g_pid) return;  // a forked child never writes the parent's file
  vouch_cupti::StopHeartbeat();
  std::lock_guard<std::mutex> lock(g_flush_mu);
  if (g_finished.exchange(true)) return;
  Api().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_writer->Footer();
}

void OnSignal(int sig, siginfo_t* info, void* uctx) {
  static std::atomic<int> entered{0};
  const struct sigaction& old = g_old[sig];
  bool old_is_function = (old.sa_flags & SA_SIGINFO)
                             ? old.sa_sigaction != nullptr
                             : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  bool terminal =
      !((sig == SIGINT || sig == SIGTERM) && (old_is_function || old.sa_handler == SIG_IGN));
  // SIGINT/SIGTERM that the program handles itself (Python's KeyboardInterrupt) do not end
  // the process: pass them on untouched; the clean exit writes the footer later.
  if (terminal && g_writer && getpid() == g_pid && entered.exchange(1) == 0 && !g_finished.load()) {
    // Best effort, bounded: should flushing block (the signal interrupted a thread holding a
    // CUPTI lock), SIGALRM's default action ends the process after 3 s.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGALRM, &dfl, nullptr);
    alarm(3);
    g_writer->Line("{\"t\":\"signal\",\"sig\":" + std::to_string(sig) + "}");
    Api().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    alarm(0);
  }
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) {
      old.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (old.sa_handler == SIG_IGN) {
    return;
  } else if (old.sa_handler != SIG_DFL) {
    old.sa_handler(sig);
    return;
  }
  sigaction(sig, &old, nullptr);  // default action: re-raise so the exit status is the signal's
  raise(sig);
}

void InstallSignalHandlers() {
  for (int sig : kSignals) {
    struct sigaction sa {};
    sa.sa_sigaction = OnSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, &g_old[sig]);
  }
}

void AtForkChild() { g_writer = nullptr; }

bool Check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* s = nullptr;
  Api().cuptiGetResultString(r, &s);
  std::fprintf(stderr, "vouch_cupti: %s failed: %s\n", what, s ? s : "?");
  return false;
}

// Loads the CUPTI of the process once (loader.h), for whichever entry comes first: the driver's
// InitializeInjection or NVTX's.
bool EnsureCupti(std::string* error) {
  static std::once_flag once;
  static bool loaded = false;
  static std::string why;
  std::call_once(once, [] { loaded = vouch_cupti::LoadCupti(&why); });
  *error = why;
  return loaded;
}

}  // namespace

VOUCH_EXPORT int InitializeInjection(void) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 1;
  g_pid = getpid();
  const vouch_cupti::Options opt = vouch_cupti::ReadOptions(g_pid);
  g_buffer_bytes = opt.buffer_bytes;
  auto* w = new Writer();
  if (!w->Open(opt.path)) {
    delete w;
    return 0;
  }
  std::string cupti_error;
  if (!EnsureCupti(&cupti_error)) {
    // No CUPTI that fits: a header that says so (ok false, the reason); the reader refuses the
    // file with it, and the leg's gpu.* figures are never written.
    std::string h = "{\"type\":\"header\",\"format\":\"vouch-gpu-trace\",\"version\":" +
                    std::to_string(kFormatVersion) + ",\"pid\":" + std::to_string(g_pid) +
                    ",\"cmdline\":" + vouch_cupti::CommandLineJson() + ",\"error\":";
    AppendEscaped(&h, cupti_error.c_str());
    w->Line(h + ",\"ok\":false}");
    std::fprintf(stderr, "vouch_cupti: not tracing: %s\n", cupti_error.c_str());
    return 0;
  }
  const std::uint32_t version = Api().version;
  // Launch-API records only with VOUCH_GPU_TRACE_API=on: without them the reader counts
  // launches by the kernels' correlation ids and attributes kernels to ranges by when they ran.
  bool want_api = opt.api;
  bool want_ts_cb = opt.timestamp_callback;
  // The clock first (before any kind is enabled, as CUPTI requires).
  bool ts_cb = want_ts_cb && Api().cuptiActivityRegisterTimestampCallback &&
               Check(Api().cuptiActivityRegisterTimestampCallback(TimestampCallback),
                     "cuptiActivityRegisterTimestampCallback");
  std::uint64_t r0 = RealtimeNs(), cts = 0;
  Api().cuptiGetTimestamp(&cts);
  std::uint64_t r1 = RealtimeNs();
  auto measured = static_cast<std::int64_t>(cts) - static_cast<std::int64_t>(r0 + (r1 - r0) / 2);
  // With the callback the records are on CLOCK_REALTIME by construction; without it they are
  // on CUPTI's own clock and the reader subtracts the measured offset.
  std::int64_t offset = ts_cb ? 0 : measured;

  bool ok = Check(Api().cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                  "cuptiActivityRegisterCallbacks");
  ok = ok && Check(Api().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                   "enable CONCURRENT_KERNEL");
  ok = ok && Check(Api().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable MEMCPY");
  ok = ok && Check(Api().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable MEMSET");
  bool markers = Check(Api().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "enable MARKER");
  bool devices = Check(Api().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), "enable DEVICE");
  int launch_apis = ok && want_api ? vouch_cupti::EnableLaunchApiRecords() : 0;
  long flush_ms = opt.flush_ms;
  // The tracer's own launch count (counter.h): how a second CUPTI client is found.
  vouch_cupti::CounterStatus counter;
  if (ok && opt.count) counter = vouch_cupti::StartLaunchCounter();
  g_counting = counter.on;
  std::string count_fields = std::string(",\"launch_count\":") +
                             (counter.on                         ? "\"on\""
                              : !counter.subscribe_error.empty() ? "\"failed\""
                                                                 : "\"off\"") +
                             ",\"launch_count_from\":\"" + opt.count_from + "\"";
  if (!counter.subscribe_error.empty()) {
    count_fields += ",\"subscribe_error\":";
    AppendEscaped(&count_fields, counter.subscribe_error.c_str());
    count_fields += ",\"other_subscriber\":";
    AppendEscaped(&count_fields, counter.other_subscriber.c_str());
    std::fprintf(stderr,
                 "vouch_cupti: another CUPTI client holds this process (%s%s%s): its gpu.* "
                 "figures will be refused\n",
                 counter.subscribe_error.c_str(), counter.other_subscriber.empty() ? "" : ", ",
                 counter.other_subscriber.c_str());
  }
  // Which CUPTI, and why (select.h).
  std::string cupti_fields = ",\"cupti_path\":";
  AppendEscaped(&cupti_fields, Api().path.c_str());
  cupti_fields += ",\"cupti_choice\":";
  AppendEscaped(&cupti_fields, Api().choice.c_str());
  cupti_fields += ",\"cupti_loaded_version\":\"" +
                  (Api().major > 0 ? std::to_string(Api().major) : std::string("?")) + "\"";

  std::string h =
      "{\"type\":\"header\",\"format\":\"vouch-gpu-trace\",\"version\":" +
      std::to_string(kFormatVersion) + ",\"pid\":" + std::to_string(g_pid) +
      ",\"ppid\":" + std::to_string(getppid()) + ",\"cmdline\":" + vouch_cupti::CommandLineJson() +
      ",\"clock\":\"CLOCK_REALTIME\",\"timestamp_callback\":" + (ts_cb ? "true" : "false") +
      ",\"timestamp_offset_ns\":" + std::to_string(offset) +
      ",\"measured_offset_ns\":" + std::to_string(measured) +
      ",\"start_unix_ns\":" + std::to_string(r0) + ",\"cupti_version\":" + std::to_string(version) +
      ",\"cupti_api_built\":" + std::to_string(CUPTI_API_VERSION) + cupti_fields + count_fields +
      ",\"kinds\":[\"CONCURRENT_KERNEL\",\"MEMCPY\",\"MEMSET\"" + (markers ? ",\"MARKER\"" : "") +
      (devices ? ",\"DEVICE\"" : "") + "],\"launch_apis\":" + std::to_string(launch_apis) +
      ",\"flush_period_ms\":" + std::to_string(flush_ms) +
      ",\"buffer_bytes\":" + std::to_string(g_buffer_bytes) +
      ",\"api\":" + (want_api ? "\"launch\"" : "\"off\"") + ",\"api_from\":\"" + opt.api_from +
      "\"" + ",\"discard\":" + (kDiscard ? "true" : "false") +
      ",\"ok\":" + (ok ? "true" : "false") + "}";
  w->Line(h);
  if (!ok) {
    // The header says ok:false and no footer follows: the reader refuses the file by name.
    std::fprintf(stderr, "vouch_cupti: tracing not enabled (see %s)\n", w->path().c_str());
    return 0;
  }
  g_writer = w;
  pthread_atfork(nullptr, nullptr, AtForkChild);
  std::atexit(Finish);
  InstallSignalHandlers();
  if (flush_ms > 0) std::thread(Flusher, flush_ms).detach();
  if (counter.on) vouch_cupti::StartHeartbeat(HeartbeatLine, g_pid, opt.count_ms);
  return 1;
}

// NVTX_INJECTION64_PATH may name this library: CUPTI implements the NVTX injection (it turns
// push/pop and start/end into MARKER records), so hand the call to libcupti's own entry.
// NVTX may come before the driver (a range pushed before cuInit): the CUPTI is chosen here then.
VOUCH_EXPORT int InitializeInjectionNvtx2(const void* get_export_table) {
  std::string error;
  if (!EnsureCupti(&error)) return 0;
  using Fn = int (*)(const void*);
  auto fn = reinterpret_cast<Fn>(dlsym(Api().handle, "InitializeInjectionNvtx2"));
  return fn ? fn(get_export_table) : 0;
}
