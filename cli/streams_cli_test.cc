// Readers and streams (issue 36, class 7), through the real binary: a GPU tracer line with a
// key twice is refused naming the line (vouch read its first value, every other JSON reader
// its last), and a telemetry stream whose unix_s steps back is refused naming the line (a
// window cut from it by unix_s held the polls of two moments). Both failed on 3cc89e2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace vouch {
namespace {

using testing_util::Has;

class StreamsCli : public testing_util::ScratchDirTest {};

constexpr const char* kTraceHeader =
    R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":7,"clock":"CLOCK_REALTIME","timestamp_offset_ns":0,"ok":true})";

TEST_F(StreamsCli, TracerLineWithAKeyTwiceIsRefusedNamingTheLine) {
  auto write = [&](const std::string& kernel) {
    std::ofstream(D("t.jsonl")) << kTraceHeader << "\n"
                                << R"({"t":"n","id":1,"v":"gemm"})"
                                << "\n"
                                << kernel << "\n"
                                << R"({"type":"footer","kernels":1,"dropped":0})"
                                << "\n";
  };
  const std::string cmd =
      fmt::format("{} trace summarize {} --json 2>&1", VOUCH_BINARY, D("t.jsonl"));
  // The control: one kernel of 100 ns.
  write(R"({"t":"k","s":1000,"e":1100,"dev":0,"str":7,"corr":1,"n":1})");
  auto ok = testing_util::Shell(cmd);
  ASSERT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(Has(ok.out, "\"kernel_sum_ns\": 100")) << ok.out;
  // "e" twice: 1100 to vouch on 3cc89e2, 1000000 to Python's json and jq.
  write(R"({"t":"k","s":1000,"e":1100,"dev":0,"str":7,"corr":1,"n":1,"e":1000000})");
  auto r = testing_util::Shell(cmd);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, D("t.jsonl") + ":3: the key \"e\" appears twice in one record")) << r.out;
  EXPECT_FALSE(Has(r.out, "kernel_sum_ns")) << r.out;
  // In the header too.
  std::ofstream(D("t.jsonl"))
      << R"({"type":"header","format":"vouch-gpu-trace","version":1,"version":2,"ok":true})"
      << "\n";
  r = testing_util::Shell(cmd);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, ":1: the key \"version\" appears twice")) << r.out;
}

TEST_F(StreamsCli, TelemetryStreamWhoseUnixTimeStepsBackIsRefused) {
  // 400 polls 10 ms apart on t_s; on unix_s the second half replays the first 2 s again.
  auto write = [&](bool step_back) {
    std::ofstream out(D("s.jsonl"));
    for (int i = 0; i < 400; ++i)
      out << fmt::format(
                 R"({{"t_s":{:.2f},"unix_s":{:.2f},"sm_mhz":1980,"mem_mhz":3201,"power_mw":249181,"util_gpu_pct":100,"util_mem_pct":100,"reasons":0,"mem_used_bytes":9789374464,"temp_c":42}})",
                 i * 0.01, 1800000000.0 + (step_back ? i % 200 : i) * 0.01)
          << "\n";
  };
  const std::string cmd =
      fmt::format("{} clock replay {} --from 1800000000 --to 1800000002 --json 2>&1", VOUCH_BINARY,
                  D("s.jsonl"));
  write(false);
  auto ok = testing_util::Shell(cmd);
  EXPECT_NE(ok.rc, 1) << ok.out;  // judged: one timeline
  EXPECT_FALSE(Has(ok.out, "steps back")) << ok.out;
  write(true);
  auto r = testing_util::Shell(cmd);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, D("s.jsonl") + ":201: unix_s steps back (1800000000.000000 after "
                                        "1800000001.990000, GPU 0)"))
      << r.out;
}

}  // namespace
}  // namespace vouch
