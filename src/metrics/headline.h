// The default headline metric: what the tool means by its result, not "the first metric with
// a direction" (which for nvbench is CPU time). Always with the reason, so that every output
// can say which metric was chosen and why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace vouch {

struct HeadlineChoice {
  std::string name;
  std::string reason;    // one sentence: the rule that chose it
  bool by_tool = false;  // a tool's own rule chose it (not the first-with-a-direction fallback)
};

// Among one leg's METRICS (in the order the leg reported them):
//   nvbench          the first state's GPU time, <bench>[<state>].nv/cold/time/gpu/mean
//   Google Benchmark the first benchmark's real_time (its median aggregate when only
//                    aggregates are there): CPU time does not count the time a CPU waits on
//                    the GPU
//   llama-bench      the first tg (token generation, decode) tokens/s: the first seed's headline
//   vllm bench serve output_throughput (output tokens/s)
//   otherwise        the first metric with a direction that is not vouch's own (vouch.*)
// Text metrics and metrics without a direction are never chosen; nullopt when none is left.
std::optional<HeadlineChoice> ChooseHeadline(const std::vector<Metric>& metrics);

}  // namespace vouch
