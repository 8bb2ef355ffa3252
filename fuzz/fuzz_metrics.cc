// Every metric format a leg's output is read with: llama-bench (JSON and JSONL), vllm bench
// serve, Google Benchmark, nvbench, hyperfine, pytest-benchmark, the VOUCH_METRICS channel, and
// the regex and JSON pointer extractors.
#include <cstdio>
#include <cstdlib>

#include "fuzz_util.h"
#include "metrics/channel.h"
#include "metrics/extract.h"
#include "metrics/formats.h"
#include "metrics/formats_hyperfine.h"
#include "metrics/summary.h"

namespace {

// The harness's own spec: a mistake in it must stop the fuzzer, not count as a reader's crash.
vouch::MetricSpec SpecOrDie(const char* text) {
  auto spec = vouch::ParseMetricSpec(text);
  if (!spec) {
    std::fprintf(stderr, "fuzz harness: bad spec: %s\n", spec.error().message.c_str());
    std::exit(2);
  }
  return *spec;
}

}  // namespace

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
    case 7:
      got = vouch::ParseHyperfine(text, "fuzz");
      break;
    case 8:
      got = vouch::ParsePytestBenchmark(text, "fuzz");
      break;
    case 4: {
      auto c = vouch::ParseMetricsChannel(text, "fuzz");
      if (c) got = std::move(c->metrics);
      break;
    }
    case 5: {
      static const auto spec = SpecOrDie("regex:tok_s:tok/s:higher:tok_s=([0-9.eE+-]+) tok/s");
      auto m = vouch::ExtractRegex(spec, text, "fuzz");
      if (m) got = std::vector<vouch::Metric>{*m};
      break;
    }
    case 6: {
      static const auto spec = SpecOrDie("json:tok_s:tok/s:higher:/results/0/tok_s");
      auto m = vouch::ExtractJsonPointer(spec, text, "fuzz");
      if (m) got = std::vector<vouch::Metric>{*m};
      break;
    }
  }
  if (got) (void)vouch::SummarizeLegs({*got, *got});
  return 0;
}
