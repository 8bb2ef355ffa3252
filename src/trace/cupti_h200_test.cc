// The CUPTI tracer's reader on activity recorded on the H200 (tests/data/trace/README.md).
#include <gtest/gtest.h>

#include "gputrace/leg_trace.h"
#include "trace/cupti_reader.h"
#include "trace/reader.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;

Summary Window(const std::string& file, const std::string& window) {
  auto t = ReadTrace(DataPath(file));
  EXPECT_TRUE(t.ok()) << t.error().message;
  SummaryOptions o;
  o.window = window;
  auto s = Summarize(*t, o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

TEST(CuptiH200, RegionKernelCountEqualsTorchProfilers) {
  // The GPU check, kept: one program, traced by vouch and by torch.profiler.
  Summary ours = Window("h200/torch_region.jsonl", "region");
  Summary kineto = Window("h200/torch_region_kineto.json.gz", "region");
  EXPECT_EQ(ours.format, "vouch-cupti");
  EXPECT_EQ(kineto.format, "kineto");
  EXPECT_EQ(ours.total.kernel_count, 120);
  EXPECT_EQ(kineto.total.kernel_count, 120);
  EXPECT_EQ(ours.kernels.size(), kineto.kernels.size());  // the same 6 kernel names
  EXPECT_EQ(ours.total.launch_api_count, 120);
  EXPECT_TRUE(ours.warnings.empty()) << ours.warnings.front();
  EXPECT_EQ(ours.clock_window, kUnattributed);
}

TEST(CuptiH200, WholeTraceAndLegFigures) {
  auto t = ReadTrace(DataPath("h200/torch_region.jsonl"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_FALSE(t->partial);
  EXPECT_EQ(t->dropped_records, 0);
  ASSERT_FALSE(t->devices.empty());
  EXPECT_EQ(t->devices[0], "NVIDIA H200");
  auto g = gputrace::AnalyzeTrace(*t, std::nullopt);
  EXPECT_EQ(g.kernels, 202);
  EXPECT_EQ(g.launches, 202);
  EXPECT_EQ(g.memcpys, 1);
  ASSERT_EQ(g.ranges.size(), 1u);
  EXPECT_EQ(g.ranges[0].name, "region");
  EXPECT_DOUBLE_EQ(g.ranges[0].kernels_median, 120);
  EXPECT_NE(g.ranges[0].attribution.find("same thread"), std::string::npos);
  // GPU-active time of the region: the union of its 120 kernels, below their sum.
  Summary s = Window("h200/torch_region.jsonl", "region");
  EXPECT_DOUBLE_EQ(g.ranges[0].median_ns, static_cast<double>(s.total.kernel_union_ns));
  EXPECT_LE(s.total.kernel_union_ns, s.total.kernel_sum_ns);
}

TEST(CuptiH200, GraphKernelsAreEachCounted) {
  auto t = ReadTrace(DataPath("h200/graph_replay.jsonl"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  int graph = 0;
  for (const auto& o : t->ops)
    if (o.kind == GpuOpKind::kKernel && o.graph_id != 0) {
      ++graph;
      EXPECT_EQ(o.graph_id, 2u);
    }
  EXPECT_EQ(graph, 300);
  auto g = gputrace::AnalyzeTrace(*t, std::nullopt);
  EXPECT_EQ(g.graph_kernels, 300);
  EXPECT_EQ(g.kernels, 320);
  // 6 launches while capturing, 50 graph launches, 20 plain launches.
  EXPECT_EQ(g.launches, 76);
  ASSERT_EQ(g.ranges.size(), 2u);
  EXPECT_EQ(g.ranges[0].name, "plain");
  EXPECT_DOUBLE_EQ(g.ranges[0].kernels_median, 20);
  EXPECT_EQ(g.ranges[1].name, "replay");
  EXPECT_DOUBLE_EQ(g.ranges[1].kernels_median, 300);  // by the cudaGraphLaunch correlation ids
  EXPECT_EQ(g.ranges[1].modal.size(), 6u);
  for (const auto& [name, n] : g.ranges[1].modal) EXPECT_EQ(n, 50) << name;
  Summary s = Window("h200/graph_replay.jsonl", "replay");
  EXPECT_EQ(s.total.kernel_count, 300);
}

TEST(CuptiH200, AProcessKilledBeforeItsFirstFlushIsPartialAndEmpty) {
  auto t = ReadTrace(DataPath("h200/killed_header_only.jsonl"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->partial);
  EXPECT_TRUE(t->ops.empty());
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("partial trace: no footer, the process (pid 629)"),
            std::string::npos);
  SummaryOptions o;
  auto s = Summarize(*t, o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
}

}  // namespace
}  // namespace vouch::trace
