// The folded whole-trace summary of a Kineto trace (SummarizeKinetoTrace) against Summarize
// over the trace read whole (ReadKinetoTrace): the same summary, text and JSON, and the same
// errors, on the recorded fixtures and on seeded traces with every kind of event.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "trace/kineto_reader.h"
#include "trace/reader.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::TempPath;

std::string Render(const Result<Summary>& s) {
  return s ? SummaryToJson(*s).dump(2) + RenderSummaryText(*s, 1000)
           : "error: " + s.error().message;
}
std::string Folded(const std::string& path, const SummaryOptions& opt = {}) {
  return Render(SummarizeKinetoTrace(path, opt));
}
std::string Whole(const std::string& path, const SummaryOptions& opt = {}) {
  auto t = ReadKinetoTrace(path);
  if (!t) return "error: " + t.error().message;
  return Render(Summarize(*t, opt));
}

// EVENTS pseudo-random events (seeded): kernels overlapping and out of order, copies, sets,
// launch and other runtime and driver calls, CPU and GPU annotations, cpu_ops, unknown
// categories, negative durations, nameless kernels, instant events.
std::string Trace(int events, std::uint32_t seed) {
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  static const char* kCats[] = {"kernel",      "kernel",          "gpu_memcpy",
                                "gpu_memset",  "cuda_runtime",    "cuda_runtime",
                                "cuda_driver", "user_annotation", "gpu_user_annotation",
                                "cpu_op",      "python_function", "mystery"};
  static const char* kNames[] = {
      "gemm_a",      "gemm_b", "cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync",
      "decode_step", "norm"};
  std::string out = R"({"schemaVersion": 1, "traceEvents": [)";
  std::int64_t t = 5090020294577;
  for (int i = 0; i < events; ++i) {
    const std::uint32_t r = next();
    t += static_cast<std::int64_t>(r % 90) - (r % 7 == 0 ? 150 : 0);
    const char* cat = kCats[next() % std::size(kCats)];
    const std::int64_t dur = r % 13 == 0 ? -3 : static_cast<std::int64_t>(next() % 70);
    const std::uint32_t n = next() % (std::size(kNames) + 1);
    const std::string name =
        n == std::size(kNames) ? "" : std::string(R"("name": ")") + kNames[n] + "\", ";
    out += fmt::format(R"({}{{"ph": "{}", "cat": "{}", {}"pid": 1, "tid": {}, "ts": {}.{}, )"
                       R"("dur": {}, "args": {{"correlation": {}, "bytes": {}, "stream": 7}}}})",
                       i ? ", " : "", r % 17 == 0 ? "i" : "X", cat, name, next() % 3, t,
                       next() % 1000, dur, i, next() % 4096);
  }
  return out + "]}";
}

TEST(KinetoFold, TheSameSummaryAsTheTraceReadWhole) {
  for (std::uint32_t seed : {1u, 7u, 24u}) {
    for (int events : {0, 1, 5, 3000}) {
      const std::string path = TempPath("kfold.json");
      std::ofstream(path) << Trace(events, seed);
      const std::string folded = Folded(path);
      EXPECT_EQ(folded.rfind("error", 0), std::string::npos) << folded;
      EXPECT_EQ(folded, Whole(path)) << "seed " << seed << ", " << events << " events";
      // Through the format-sniffing entry point too.
      EXPECT_EQ(Render(SummarizeTrace(path, {})), folded);
      SummaryOptions window;  // not folded: the trace read whole
      window.window = "decode_step";
      EXPECT_EQ(Folded(path, window), Whole(path, window));
      std::remove(path.c_str());
    }
  }
}

TEST(KinetoFold, TheRecordedTraces) {
  for (const char* name : {"small.json", "no_kernels.json", "h200/torch_region_kineto.json.gz"}) {
    const std::string folded = Folded(DataPath(name));
    EXPECT_EQ(folded.rfind("error", 0), std::string::npos) << name << ": " << folded;
    EXPECT_EQ(folded, Whole(DataPath(name))) << name;
  }
}

TEST(KinetoFold, TheSameErrors) {
  const std::string path = TempPath("kfold_errors.json");
  const std::string huge = "3000000000000000";  // microseconds: 3e18 ns, two past 2^62 ns
  for (const std::string& text : {
           R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": )" + huge +
               R"(}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": )" + huge + "}]}",
           R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "c", "ts": 0, "dur": )" +
               huge + R"(}, {"ph": "X", "cat": "cuda_runtime", "name": "c", "ts": 0, "dur": )" +
               huge + "}]}",
           std::string(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1)"),
           std::string(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "x", "dur": 1}]})"),
           std::string(R"({"other": []})"),
           // Args the fold does not read but the whole read walks (the fuzzer's find:
           // fuzz/regressions/kineto/folded_args_missing_colon.json).
           std::string(R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "c", )"
                       R"("ts": 1, "dur": 2, "args": {"corre " "cution": 1}}]})"),
           std::string(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, )"
                       R"("dur": 2, "args": {"grid": [1, 1, 1], "stream" 7}}]})"),
           std::string(R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "c", )"
                       R"("ts": 1, "dur": 2, "args": {"corr\lation": 1}}]})"),
       }) {
    std::ofstream(path) << text;
    const std::string folded = Folded(path);
    EXPECT_EQ(folded.rfind("error: " + path, 0), 0u) << text << "\n" << folded;
    EXPECT_EQ(folded, Whole(path)) << text;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vouch::trace
