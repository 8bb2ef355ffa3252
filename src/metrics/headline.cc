#include "metrics/headline.h"

#include <fmt/format.h>

#include <string_view>

#include "util/strings.h"

namespace vouch {
namespace {

bool Usable(const Metric& m) {
  return !m.is_text() && m.better != Better::kNone && !StartsWith(m.name, "vouch.");
}

// The tool is named by the first word of a metric's source (formats.cc writes "nvbench PATH",
// "gbench PATH", "llama-bench PATH", "vllm PATH").
bool From(const Metric& m, std::string_view tool) {
  return StartsWith(m.source, tool) && m.source.size() > tool.size() &&
         m.source[tool.size()] == ' ';
}

const Metric* First(const std::vector<Metric>& ms, std::string_view tool,
                    bool (*pick)(const Metric&)) {
  for (const auto& m : ms)
    if (Usable(m) && From(m, tool) && pick(m)) return &m;
  return nullptr;
}

bool IsGbenchAggregate(std::string_view bench) {
  for (std::string_view a : {"_mean", "_median", "_stddev", "_cv"})
    if (EndsWith(bench, a)) return true;
  return false;
}

}  // namespace

std::optional<HeadlineChoice> ChooseHeadline(const std::vector<Metric>& ms) {
  if (const Metric* m = First(ms, "nvbench", [](const Metric& x) {
        return EndsWith(x.name, ".nv/cold/time/gpu/mean");
      }))
    return HeadlineChoice{m->name,
                          "nvbench: the first state's GPU time (nv/cold/time/gpu/mean), what "
                          "nvbench measures; its CPU time also counts launch and sync overhead",
                          true};
  if (const Metric* m = First(ms, "gbench", [](const Metric& x) {
        std::string_view n = x.name;
        return EndsWith(n, ".real_time") &&
               !IsGbenchAggregate(n.substr(0, n.size() - std::string_view(".real_time").size()));
      }))
    return HeadlineChoice{m->name,
                          "Google Benchmark: the first benchmark's real time per iteration; CPU "
                          "time does not count the time the CPU waits on the GPU",
                          true};
  if (const Metric* m = First(
          ms, "gbench", [](const Metric& x) { return EndsWith(x.name, "_median.real_time"); }))
    return HeadlineChoice{m->name,
                          "Google Benchmark: the first benchmark's median real time per iteration "
                          "(only aggregates were reported)",
                          true};
  if (const Metric* m = First(ms, "llama-bench", [](const Metric& x) {
        return StartsWith(x.name, "tg") && EndsWith(x.name, ".tokens_per_s");
      }))
    return HeadlineChoice{m->name,
                          "llama-bench: token generation (decode) tokens/s, the A/B signal; "
                          "prompt processing varies more and is a secondary metric",
                          true};
  if (const Metric* m = First(ms, "llama-bench",
                              [](const Metric& x) { return EndsWith(x.name, ".tokens_per_s"); }))
    return HeadlineChoice{
        m->name, "llama-bench: the first test's tokens/s (no token generation test ran)", true};
  if (const Metric* m =
          First(ms, "vllm", [](const Metric& x) { return x.name == "output_throughput"; }))
    return HeadlineChoice{m->name, "vllm bench serve: output token throughput (tokens/s)", true};
  for (const auto& m : ms)
    if (Usable(m))
      return HeadlineChoice{m.name,
                            fmt::format("the first metric with a direction the leg reported ({}); "
                                        "give --headline NAME to choose another",
                                        m.source.empty() ? "no known tool" : m.source),
                            false};
  return std::nullopt;
}

}  // namespace vouch
