// A small driver for the trace readers' benchmarks: reads one trace (Kineto JSON, nsys SQLite
// or vouch's CUPTI lines) and summarises it as `vouch trace summarize --json` does, without
// the rest of vouch (it builds from src/trace and a few util files: cheap to build at any
// commit, and in CI). Prints the CPU seconds of the read and of the summary as JSON.
//
// usage: vouch_trace_bench FILE [--window NAME] [--reps N]
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "trace/reader.h"
#include "trace/summary.h"

namespace {

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vouch_trace_bench FILE [--window NAME] [--reps N]\n");
    return 64;
  }
  std::string path = argv[1];
  vouch::trace::SummaryOptions opt;
  int reps = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--window") opt.window = argv[i + 1];
    if (a == "--reps") reps = std::atoi(argv[i + 1]);
  }
  double read_s = 0, summary_s = 0;
  std::size_t json_bytes = 0, ops = 0;
  for (int r = 0; r < reps; ++r) {
    double c0 = CpuSeconds();
    auto t = vouch::trace::ReadTrace(path);
    if (!t) {
      std::fprintf(stderr, "%s\n", t.error().message.c_str());
      return 1;
    }
    double c1 = CpuSeconds();
    auto s = vouch::trace::Summarize(*t, opt);
    if (!s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return 1;
    }
    vouch::trace::StreamSummaryJson(*s, [&](std::string_view b) { json_bytes += b.size(); });
    double c2 = CpuSeconds();
    read_s += c1 - c0;
    summary_s += c2 - c1;
    ops = t->ops.size();
  }
  fmt::print(
      "{{\"read_cpu_s\":{:.4f},\"summary_cpu_s\":{:.4f},\"gpu_ops\":{},\"json_bytes\":{}}}\n",
      read_s / reps, summary_s / reps, ops, json_bytes / static_cast<std::size_t>(reps));
  return 0;
}
