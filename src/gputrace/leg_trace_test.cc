#include "gputrace/leg_trace.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "trace/cupti_reader.h"
#include "trace/test_util.h"

namespace vouch::gputrace {
namespace {

constexpr std::int64_t kT0 = 1764412345000000000;

trace::Trace Small() {
  auto t = trace::ReadCuptiTrace(trace::testing::DataPath("cupti_small.jsonl"));
  EXPECT_TRUE(t.ok()) << t.error().message;
  return *t;
}

TEST(LegGpuTrace, WholeTraceFigures) {
  LegGpuTrace g = AnalyzeTrace(Small(), std::nullopt);
  EXPECT_FALSE(g.region_marked);
  EXPECT_EQ(g.kernels, 6);
  EXPECT_EQ(g.graph_kernels, 2);
  EXPECT_EQ(g.launches, 5);  // the nested driver launch is not a second one
  EXPECT_EQ(g.memcpys, 1);
  EXPECT_EQ(g.memsets, 1);
  // Union of kernel intervals: 25 us + 27 us (two overlap by 1 us) + 4 us.
  EXPECT_EQ(g.active_ns, 56000);
  EXPECT_EQ(g.by_kernel.at("gemv_kernel").count, 2);
  EXPECT_EQ(g.by_kernel.at("gemv_kernel").total_ns, 42000);
  ASSERT_EQ(g.ranges.size(), 1u);
  const RangeFigures& r = g.ranges[0];
  EXPECT_EQ(r.name, "decode_step");
  EXPECT_EQ(r.instances, 2);
  ASSERT_EQ(r.active_ns.size(), 2u);
  EXPECT_DOUBLE_EQ(r.active_ns[0], 25000);
  EXPECT_DOUBLE_EQ(r.active_ns[1], 27000);
  EXPECT_DOUBLE_EQ(r.median_ns, 26000);
  EXPECT_DOUBLE_EQ(r.p10_ns, 25200);
  EXPECT_DOUBLE_EQ(r.p90_ns, 26800);
  EXPECT_NEAR(r.spread_pct, 1600.0 / 26000 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(r.kernels_median, 2);
  EXPECT_EQ(r.modal, (KernelMultiset{{"gemv_kernel", 1}, {"silu_kernel", 1}}));
  EXPECT_DOUBLE_EQ(r.modal_fraction, 1.0);
  ASSERT_EQ(r.mixes.size(), 1u);  // both instances ran the one mix
  EXPECT_EQ(r.mixes[0].kernels, r.modal);
  EXPECT_EQ(r.mixes[0].instances, 2);
  EXPECT_DOUBLE_EQ(r.per_instance.at("gemv_kernel").ns, 21000);
  EXPECT_DOUBLE_EQ(r.per_instance.at("silu_kernel").ns, 5500);
  EXPECT_NE(r.attribution.find("same thread"), std::string::npos);
}

TEST(LegGpuTrace, MeasuredRegionByLaunchTime) {
  LegGpuTrace g = AnalyzeTrace(Small(), RegionNs{kT0 + 1000000, kT0 + 2050000});
  EXPECT_TRUE(g.region_marked);
  EXPECT_EQ(g.kernels, 4);  // the copy before and the graph after are outside
  EXPECT_EQ(g.graph_kernels, 0);
  EXPECT_EQ(g.memcpys, 0);
  EXPECT_EQ(g.launches, 4);
  EXPECT_EQ(g.active_ns, 52000);
  ASSERT_EQ(g.ranges.size(), 1u);
  EXPECT_EQ(g.ranges[0].instances, 2);
  // A region that starts after the first step holds only the second.
  LegGpuTrace g2 = AnalyzeTrace(Small(), RegionNs{kT0 + 1500000, kT0 + 2050000});
  ASSERT_EQ(g2.ranges.size(), 1u);
  EXPECT_EQ(g2.ranges[0].instances, 1);
  EXPECT_EQ(g2.kernels, 2);
}

TEST(LegGpuTrace, FallsBackWhenRangeAndApiThreadsDiffer) {
  std::string text = trace::testing::Slurp(trace::testing::DataPath("cupti_small.jsonl"));
  // The ranges on thread 78, the launches on 77.
  for (std::size_t p = 0; (p = text.find("\"tid\":77,\"n\":0", p)) != std::string::npos;)
    text.replace(p, 8, "\"tid\":78");
  auto t = trace::ParseCuptiTrace(text, "x");
  ASSERT_TRUE(t.ok()) << t.error().message;
  LegGpuTrace g = AnalyzeTrace(*t, std::nullopt);
  ASSERT_EQ(g.ranges.size(), 1u);
  EXPECT_NE(g.ranges[0].attribution.find("any thread"), std::string::npos);
  EXPECT_DOUBLE_EQ(g.ranges[0].median_ns, 26000);
}

TEST(LegGpuTrace, WithoutLaunchApiRecordsLaunchesAreCountedByCorrelationId) {
  // The tracer's default (no VOUCH_GPU_TRACE_API=on): the same trace without its launch-API lines.
  std::string text = trace::testing::Slurp(trace::testing::DataPath("cupti_small.jsonl"));
  std::string kept;
  int dropped = 0;
  for (std::size_t p = 0; p < text.size();) {
    std::size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(p, e - p);
    if (line.find("\"t\":\"a\"") != std::string::npos)
      ++dropped;
    else
      kept += line + "\n";
    p = e + 1;
  }
  ASSERT_EQ(dropped, 6);
  auto t = trace::ParseCuptiTrace(kept, "x");
  ASSERT_TRUE(t.ok()) << t.error().message;
  LegGpuTrace g = AnalyzeTrace(*t, std::nullopt);
  EXPECT_EQ(g.kernels, 6);
  // Kernels of correlation ids 10, 12, 20, 21 and the graph launch 31 (two kernels): 5, as
  // the launch calls counted.
  EXPECT_EQ(g.launches, 5);
  EXPECT_NE(g.launches_from.find("correlation"), std::string::npos);
  ASSERT_EQ(g.ranges.size(), 1u);
  EXPECT_NE(g.ranges[0].attribution.find("start inside"), std::string::npos);
  EXPECT_NE(RenderLegGpuTraceText(g, "x").find("5 launches (by kernel correlation id)"),
            std::string::npos);
  auto back = LegGpuTraceFromJson(ToJson(g), "leg 1");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->launches_from, g.launches_from);
  // With the launch calls, the text says so.
  EXPECT_NE(RenderLegGpuTraceText(AnalyzeTrace(Small(), std::nullopt), "x").find("5 launch calls"),
            std::string::npos);
}

TEST(LegGpuTrace, MetricsAndJsonRoundTrip) {
  LegGpuTrace g = AnalyzeTrace(Small(), std::nullopt);
  g.files = {"gpu-trace.4242.jsonl"};
  auto m = GpuTraceMetrics(g);
  const Metric* per = FindMetric(m, "gpu.active_ns_per.decode_step");
  ASSERT_NE(per, nullptr);
  EXPECT_DOUBLE_EQ(per->value, 26000);
  EXPECT_EQ(per->better, Better::kLower);
  EXPECT_EQ(per->samples, (std::vector<double>{25000, 27000}));
  ASSERT_NE(FindMetric(m, "gpu.active_ns"), nullptr);
  EXPECT_DOUBLE_EQ(FindMetric(m, "gpu.active_ns")->value, 56000);
  EXPECT_DOUBLE_EQ(FindMetric(m, "gpu.launches")->value, 5);
  EXPECT_DOUBLE_EQ(FindMetric(m, "gpu.kernels_per.decode_step")->value, 2);
  ASSERT_NE(FindMetric(m, "gpu.active_ns_per.decode_step.spread_pct"), nullptr);
  auto back = LegGpuTraceFromJson(ToJson(g), "leg 3");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ToJson(*back).dump(), ToJson(g).dump());
  auto bad =
      LegGpuTraceFromJson(nlohmann::json{{"schema", "vouch.gpu_trace"}, {"version", 1}}, "leg 3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("leg 3: malformed vouch.gpu_trace"), std::string::npos);
  EXPECT_EQ(MetricSafe("decode step"), "decode_step");
}

TEST(LegGpuTrace, LegDirWithoutTraceIsAClearError) {
  namespace fs = std::filesystem;
  fs::path dir = trace::testing::TempPath("legdir");
  fs::create_directories(dir);
  auto g = AnalyzeLegDir(dir.string(), std::nullopt);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("the tracer wrote no gpu-trace*.jsonl"), std::string::npos);
  fs::copy_file(trace::testing::DataPath("cupti_small.jsonl"), dir / "gpu-trace.4242.jsonl");
  trace::testing::Spit((dir / "gpu-trace.4243.jsonl").string(), "{\"type\":\"header\"}\n");
  g = AnalyzeLegDir(dir.string(), std::nullopt);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("gpu-trace.4243.jsonl:1: not a vouch GPU trace"),
            std::string::npos)
      << g.error().message;
  fs::remove(dir / "gpu-trace.4243.jsonl");
  g = AnalyzeLegDir(dir.string(), std::nullopt);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->files, std::vector<std::string>{"gpu-trace.4242.jsonl"});
  EXPECT_EQ(g->kernels, 6);
  std::string text = RenderLegGpuTraceText(*g, "clock window: leg 1 (A measured), window valid");
  EXPECT_NE(text.find("clock window: leg 1 (A measured), window valid"), std::string::npos);
  EXPECT_NE(text.find("range 'decode_step': 2 instances, GPU-active per instance median 26.0 us"),
            std::string::npos)
      << text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vouch::gputrace
