// vouch/metrics.h: report metrics and the measured region from a benchmark to vouch.
//
// Header-only, C++17, no dependencies. Each call appends one JSON line to the file named
// by the environment variable VOUCH_METRICS (vouch sets it for every leg) and flushes it,
// so a crash loses at most the line being written. When VOUCH_METRICS is unset every call
// does nothing, so the benchmark runs the same outside vouch.
//
//   #include <vouch/metrics.h>
//   vouch::begin();                                   // measured region starts
//   ... timed work ...
//   vouch::end();                                     // measured region ends
//   vouch::report("decode.tokens_per_s", 131.4, "tok/s", "higher");
//   vouch::report_text("video_sha256", hex);          // a checksum, for --expect-equal
//
// Line format (parsed by src/metrics/channel.cc):
//   {"name":"decode.tokens_per_s","value":131.4,"unit":"tok/s","better":"higher","unix_s":...}
// A non-finite value is written as null, which vouch refuses: a NaN is never a number.
#ifndef VOUCH_METRICS_H_
#define VOUCH_METRICS_H_

#include <chrono>   // unix_s timestamps
#include <cmath>    // std::isfinite
#include <cstdio>   // FILE*, fopen, snprintf
#include <cstdlib>  // getenv
#include <string>

namespace vouch {
namespace metrics_detail {

inline std::string Quote(const char* s) {
  std::string out = "\"";
  for (const char* p = s ? s : ""; *p; ++p) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

inline std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline double UnixSeconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

// Appends FIELDS plus the time as one line. Opening per line keeps it simple and safe
// across fork(); these calls are not meant for hot loops.
inline void WriteLine(const std::string& fields) {
  const char* path = std::getenv("VOUCH_METRICS");
  if (!path || !*path) return;
  std::FILE* f = std::fopen(path, "a");
  if (!f) return;
  char t[48];
  std::snprintf(t, sizeof t, "%.6f", UnixSeconds());
  std::string line = "{" + fields + ",\"unix_s\":" + t + "}\n";
  std::fwrite(line.data(), 1, line.size(), f);
  std::fflush(f);
  std::fclose(f);
}

}  // namespace metrics_detail

// better: "higher", "lower" or "none".
inline void report(const char* name, double value, const char* unit = "",
                   const char* better = "none") {
  using namespace metrics_detail;
  WriteLine("\"name\":" + Quote(name) + ",\"value\":" + Number(value) + ",\"unit\":" + Quote(unit) +
            ",\"better\":" + Quote(better));
}

// A text value (a checksum such as a sha256 hex digest): compared for equality only.
inline void report_text(const char* name, const char* text) {
  using namespace metrics_detail;
  WriteLine("\"name\":" + Quote(name) + ",\"text\":" + Quote(text));
}

inline void begin() { metrics_detail::WriteLine("\"event\":\"begin\""); }
inline void end() { metrics_detail::WriteLine("\"event\":\"end\""); }

}  // namespace vouch

#endif  // VOUCH_METRICS_H_
