// The VOUCH_METRICS channel: a leg appends JSON lines to the file named by $VOUCH_METRICS.
//   {"name": "tok_s", "value": 1234.5, "unit": "tok/s", "better": "higher", "unix_s": ...}
//   {"name": "video_sha256", "text": "c62d23...", "unix_s": ...}     (a checksum: equality only)
//   {"event": "begin", "unix_s": 1764412345.123}                    (measured region starts)
//   {"event": "end",   "unix_s": 1764412399.456}                    (measured region ends)
// include/vouch/metrics.h writes exactly this; docs/metrics.md has the Python equivalent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

struct ChannelEvent {
  enum class Kind { kBegin, kEnd };
  Kind kind = Kind::kBegin;
  // The writer's wall clock (seconds since the epoch) when present; without it the caller
  // uses the time it saw the line arrive.
  std::optional<double> unix_s;
  int line = 0;  // 1-based line number in the channel file
};

struct ChannelContents {
  std::vector<Metric> metrics;
  std::vector<ChannelEvent> events;  // in file order; begin/end alternate, starting with begin
  // True when the last event is a begin with no end (the leg died inside its region).
  bool region_open = false;
};

// Parses the channel text. PATH only names the file in errors. Every problem is an error
// that names the file and line: malformed JSON, a missing or non-finite value, an unknown
// direction, a metric reported twice, an end without a begin, and a truncated last line
// (no newline and not valid JSON: the leg crashed mid-write).
Result<ChannelContents> ParseMetricsChannel(std::string_view text, std::string_view path);

// Error unless every begin/end marker that carries unix_s lies inside the leg's own time
// span [LEG_START, LEG_END] (unix nanoseconds). The message names LEG, the file and the line.
Status CheckMarkersInLeg(const ChannelContents& contents, std::string_view path,
                         std::string_view leg, std::int64_t leg_start_unix_ns,
                         std::int64_t leg_end_unix_ns);

// Reads and parses the channel file. A file that does not exist means the leg reported
// nothing (empty contents, not an error); required metrics catch a silent leg.
Result<ChannelContents> ReadMetricsChannel(const std::string& path);

}  // namespace vouch
