// The tracer's switches and set-up helpers (options.h).
#include "options.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace vouch_cupti {
namespace {

std::string ReadSmallFile(const char* path) {
  std::string s;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 && s.size() < 65536)
    s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

std::string OutputPath(pid_t pid) {
  const char* env = std::getenv("VOUCH_GPU_TRACE");
  std::string tmpl = env && *env ? env : "vouch-gpu-trace.%p.jsonl";
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '%' && i + 1 < tmpl.size() && tmpl[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += tmpl[i];
    }
  }
  return out;
}

// VOUCH_GPU_TRACE_<name>: the tracer's switches, each recorded in the header.
bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

}  // namespace

void AppendEscaped(std::string* out, const char* s) {
  out->push_back('"');
  for (; s && *s; ++s) {
    auto c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

Options ReadOptions(pid_t pid) {
  Options o;
  o.path = OutputPath(pid);
  if (const char* mb = std::getenv("VOUCH_GPU_TRACE_BUFFER_MB")) {
    long v = std::strtol(mb, nullptr, 10);
    if (v >= 1 && v <= 1024) o.buffer_bytes = static_cast<std::size_t>(v) << 20;
  }
  // Launch-API records are opt-in: VOUCH_GPU_TRACE_API=on (or "launch", the header's word).
  if (const char* a = std::getenv("VOUCH_GPU_TRACE_API"); a && *a) {
    o.api_from = "VOUCH_GPU_TRACE_API";
    if (std::strcmp(a, "on") == 0 || std::strcmp(a, "launch") == 0) {
      o.api = true;
    } else if (std::strcmp(a, "off") != 0) {
      std::fprintf(stderr, "vouch_cupti: VOUCH_GPU_TRACE_API=%s is not on, launch or off: off\n",
                   a);
    }
  }
  // VOUCH_GPU_TRACE_CLOCK=cupti: CUPTI's own clock, the offset to CLOCK_REALTIME measured once
  // at init and applied by the reader, instead of a callback on every timestamp.
  o.timestamp_callback = !EnvIs("VOUCH_GPU_TRACE_CLOCK", "cupti");
  // The periodic forced flush (partly filled buffers too) is off by default: on the H200 it
  // cost the traced process 1-2 % at 5,000 launches/s (evidence/2026-12-01-h200-tracer-cost).
  if (const char* f = std::getenv("VOUCH_GPU_TRACE_FLUSH_MS"))
    o.flush_ms = std::strtol(f, nullptr, 10);
  if (const char* c = std::getenv("VOUCH_GPU_TRACE_COUNT"); c && *c) {
    o.count_from = "VOUCH_GPU_TRACE_COUNT";
    if (std::strcmp(c, "off") == 0)
      o.count = false;
    else if (std::strcmp(c, "on") != 0)
      std::fprintf(stderr, "vouch_cupti: VOUCH_GPU_TRACE_COUNT=%s is not on or off: on\n", c);
  }
  if (const char* m = std::getenv("VOUCH_GPU_TRACE_COUNT_MS")) {
    long v = std::strtol(m, nullptr, 10);
    if (v >= 10 && v <= 60000) o.count_ms = v;
  }
  return o;
}

std::string CommandLineJson() {
  // /proc/self/cmdline: arguments, each ended by a NUL.
  std::string raw = ReadSmallFile("/proc/self/cmdline");
  std::string out = "[";
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    if (out.size() > 1) out += ',';
    AppendEscaped(&out, raw.substr(start, end - start).c_str());
    start = end + 1;
  }
  return out + "]";
}

}  // namespace vouch_cupti
