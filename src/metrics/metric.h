// The metric model: one named number (or checksum text) a leg reported, with its unit and
// which direction is better. Every source (channel, llama-bench, vllm, Google Benchmark,
// nvbench, regex, JSON pointer) produces these; nothing downstream knows the formats.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch {

enum class Better { kHigher, kLower, kNone };

// The most metrics one leg may report (all sources together): past it a leg is flooding
// vouch, and the leg's metrics are refused with an error naming the leg's file.
inline constexpr std::size_t kMaxMetricsPerLeg = 100000;

std::string_view BetterName(Better b);  // "higher", "lower", "none"
// Accepts "higher", "lower", "none" (and "" as none); anything else is an error naming it.
Result<Better> ParseBetter(std::string_view s);

struct Metric {
  std::string name;  // e.g. "tg128.tokens_per_s", "mean_ttft_ms", "BM_Copy/64.real_time"
  double value = 0;  // always finite; 0 and meaningless when `text` is set
  std::string unit;  // e.g. "tok/s", "ms", "ns", "B/s"; "" when the source has none
  Better better = Better::kNone;
  std::string source;  // where it came from, e.g. "llama-bench:stdout", "channel:line 3"
  // Per-repetition values inside this one leg when the tool reports them (llama-bench
  // samples_ts, Google Benchmark repetitions). Empty otherwise. Always finite.
  std::vector<double> samples;
  // Set for text metrics (a checksum such as a sha256): usable only for equality checks.
  std::optional<std::string> text;
  // The configuration that produced the number, when the tool reports one (llama-bench: the
  // model, n_batch, n_ubatch, n_threads, n_gpu_layers, flash_attn, type_k, type_v, ...). A
  // gate refuses to compare two figures whose configurations differ. Empty otherwise.
  std::map<std::string, std::string> config = {};
  // The integer the source wrote, when it wrote one (a count such as 2^53 + 1 that a double
  // cannot hold): --expect compares integers as integers.
  std::optional<long long> integer = {};

  bool is_text() const { return text.has_value(); }
};

// The metric named NAME, or nullptr. A reserved name (vouch.*, gpu.*: metrics/reserved.h)
// resolves only to vouch's own figure, never to a leg's metric of that name.
const Metric* FindMetric(const std::vector<Metric>& metrics, std::string_view name);

// Error unless every metric in NAMES is present. The message names the metric, the source
// description and the closest name that is there (a typo is the usual cause).
Status RequireMetrics(const std::vector<Metric>& metrics, const std::vector<std::string>& names,
                      std::string_view source);

}  // namespace vouch
