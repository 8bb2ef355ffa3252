// Every metric format a leg's output is read with: llama-bench (JSON and JSONL), vllm bench
// serve, Google Benchmark, nvbench, the VOUCH_METRICS channel, and the regex and JSON pointer
// extractors.
#include "fuzz_util.h"
#include "metrics/channel.h"
#include "metrics/extract.h"
#include "metrics/formats.h"
#include "metrics/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Built once per reader with VOUCH_FUZZ_PICK set (fuzz/CMakeLists.txt).
  const auto text = vouch::fuzz::AsText(data, size);
  vouch::Result<std::vector<vouch::Metric>> got = std::vector<vouch::Metric>{};
  switch (VOUCH_FUZZ_PICK) {
    case 0:
      got = vouch::ParseLlamaBench(text, "fuzz");
      break;
    case 1:
      got = vouch::ParseVllmBenchServe(text, "fuzz");
      break;
    case 2:
      got = vouch::ParseGoogleBenchmark(text, "fuzz");
      break;
    case 3:
      got = vouch::ParseNvbench(text, "fuzz");
      break;
    case 4: {
      auto c = vouch::ParseMetricsChannel(text, "fuzz");
      if (c) got = std::move(c->metrics);
      break;
    }
    case 5: {
      static const auto spec = *vouch::ParseMetricSpec("regex:tok_s=([0-9.eE+-]+) tok/s");
      auto m = vouch::ExtractRegex(spec, text, "fuzz");
      if (m) got = std::vector<vouch::Metric>{*m};
      break;
    }
    default: {
      static const auto spec = *vouch::ParseMetricSpec("json:tok_s=/results/0/tok_s");
      auto m = vouch::ExtractJsonPointer(spec, text, "fuzz");
      if (m) got = std::vector<vouch::Metric>{*m};
      break;
    }
  }
  if (got) (void)vouch::SummarizeLegs({*got, *got});
  return 0;
}
