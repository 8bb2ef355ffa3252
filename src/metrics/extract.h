// One entry point for the leg executor: a metric spec (from --metric) and the files a leg
// left behind give that leg's metrics, or an error naming the leg's file and the problem.
//
// Spec syntax (docs/metrics.md):
//   channel                              the VOUCH_METRICS file (the default)
//   llama-bench | vllm | gbench | nvbench | hyperfine | pytest-benchmark
//                                         a known format, read from stdout
//   FORMAT:FILE  or  FORMAT@FILE          ... read from FILE (relative to the working dir)
//   FORMAT@stderr                         ... read from the leg's stderr
//   ...#NAME[#NAME...]                    require these metrics (error if a leg lacks one)
//   regex[@SRC]:NAME:UNIT:BETTER:PATTERN   group 1 of the last line matching PATTERN
//   json[@SRC]:NAME:UNIT:BETTER:/POINTER   the number at RFC 6901 POINTER
// SRC is stdout (default), stderr, or a file path without ':'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

struct MetricSpec {
  enum class Kind {
    kChannel,
    kLlamaBench,
    kVllm,
    kGbench,
    kNvbench,
    kHyperfine,
    kPytestBenchmark,
    kRegex,
    kJsonPointer
  };
  Kind kind = Kind::kChannel;
  // "stdout", "stderr", or a file path (relative paths are taken from the leg's working
  // directory). Unused for kChannel.
  std::string from = "stdout";
  // Format kinds: metrics that must be present in every leg. Regex/JSON: the one metric.
  std::vector<std::string> required;
  // kRegex and kJsonPointer only: the metric they define.
  std::string name;
  std::string unit;
  Better better = Better::kNone;
  std::string pattern;  // kRegex: RE2 regex with at least one group; kJsonPointer: pointer
  std::string text;     // the spec as given, for messages and the record
};

struct LegOutputs {
  std::string stdout_path;
  std::string stderr_path;
  std::string metrics_path;  // the VOUCH_METRICS file (may not exist if the leg wrote none)
  std::string working_dir;   // relative FILEs in specs are resolved here
};

std::string_view MetricSpecKindName(MetricSpec::Kind k);

// The file SPEC reads for a leg: its stdout or stderr file, the channel, or its named file
// (relative paths resolved in the leg's working directory).
std::string SourcePath(const MetricSpec& spec, const LegOutputs& outs);

// Parses one --metric value. Errors say what is wrong and show the expected form; an
// invalid regex or JSON pointer, or a name under vouch's reserved prefixes (vouch.*, gpu.*:
// metrics/reserved.h) to define or require, is caught here, before any leg runs.
Result<MetricSpec> ParseMetricSpec(std::string_view s);

// Reads the spec's source from OUTS and returns the leg's metrics. Missing or unreadable
// files, empty or malformed output, non-finite values, missing required metrics and a
// metric under a reserved prefix (vouch.*, gpu.*) are errors that name the file and the spec. The
// channel's begin/end events come from ReadMetricsChannel (metrics/channel.h).
Result<std::vector<Metric>> ExtractMetrics(const MetricSpec& spec, const LegOutputs& outs);

// All specs of a run for one leg, merged in spec order. The first error is returned; a
// metric name produced twice (by two specs, or twice by one) is an error: which one would be
// meant is a guess.
Result<std::vector<Metric>> ExtractAllMetrics(const std::vector<MetricSpec>& specs,
                                              const LegOutputs& outs);

// The pure extractors behind regex: and json: (PATH only names the text in errors).
Result<Metric> ExtractRegex(const MetricSpec& spec, std::string_view text, std::string_view path);
Result<Metric> ExtractJsonPointer(const MetricSpec& spec, std::string_view text,
                                  std::string_view path);

}  // namespace vouch
