// Issue 21, class 1: vouch.* and gpu.* are vouch's alone. Every source a leg controls refuses
// them with its file and line, and a reserved name resolves to vouch's own figure whatever
// the order of a leg's metrics.
#include "metrics/reserved.h"

#include <gtest/gtest.h>

#include "metrics/channel.h"
#include "metrics/expect.h"
#include "metrics/extract.h"
#include "metrics/metrics_test_util.h"
#include "metrics/summary.h"

namespace vouch {
namespace {

using metrics_test::TempDir;

Metric Make(std::string name, double v, std::string source) {
  Metric m;
  m.name = std::move(name);
  m.value = v;
  m.source = std::move(source);
  return m;
}

std::string ErrorOf(const Result<std::vector<Metric>>& r) {
  return r ? std::string("(no error)") : r.error().message;
}

TEST(Reserved, ThePrefixesVouchOwnsInAnyCase) {
  EXPECT_TRUE(IsReservedMetricName("vouch.wall_s"));
  EXPECT_TRUE(IsReservedMetricName("gpu.active_ns"));
  EXPECT_TRUE(IsReservedMetricName("gpu.active_ns_per.decode"));
  EXPECT_TRUE(IsReservedMetricName("GPU.active_ns"));
  EXPECT_TRUE(IsReservedMetricName("Vouch.exit_status"));
  EXPECT_EQ(ReservedPrefixOf("GPU.x"), "gpu.");
  EXPECT_FALSE(IsReservedMetricName("gpu"));
  EXPECT_FALSE(IsReservedMetricName("gpu_time"));
  EXPECT_FALSE(IsReservedMetricName("my.gpu.active_ns"));
  EXPECT_FALSE(IsReservedMetricName("vouchers.count"));
  EXPECT_FALSE(IsReservedMetricName(""));
  EXPECT_TRUE(IsVouchSource("vouch"));
  EXPECT_TRUE(IsVouchSource("vouch gpu-trace"));
  EXPECT_FALSE(IsVouchSource("vouchy"));
  EXPECT_FALSE(IsVouchSource("channel m.jsonl:1"));
  EXPECT_EQ(CheckLegMetricName("gpu.active_ns", "m.jsonl:2").error().message,
            "m.jsonl:2: metric 'gpu.active_ns' is under 'gpu.*', a prefix vouch reserves for "
            "what it measures itself (vouch.*, gpu.*): a leg cannot report it; give the metric "
            "another name");
  EXPECT_TRUE(CheckLegMetricName("tok_s", "m.jsonl:2"));
}

TEST(Reserved, TheChannelRefusesAReservedNameWithItsLine) {
  auto r = ParseMetricsChannel(
      "{\"name\":\"tok_s\",\"value\":100}\n{\"name\":\"gpu.active_ns\",\"value\":1}\n",
      "legs/001-run-measured/metrics.jsonl");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("legs/001-run-measured/metrics.jsonl:2: metric "
                                    "'gpu.active_ns' is under 'gpu.*'",
                                    0),
            0u)
      << r.error().message;
  auto wall = ParseMetricsChannel("{\"name\":\"vouch.wall_s\",\"value\":1}\n", "m.jsonl");
  ASSERT_FALSE(wall);
  EXPECT_NE(wall.error().message.find("m.jsonl:1: metric 'vouch.wall_s' is under 'vouch.*'"),
            std::string::npos);
}

TEST(Reserved, ExtractorsAndRequiredNamesAreRefusedBeforeAnyLeg) {
  auto re = ParseMetricSpec("regex:gpu.active_ns:ns:lower:([0-9]+)");
  ASSERT_FALSE(re);
  EXPECT_EQ(re.error().message.rfind("metric spec 'regex:gpu.active_ns:ns:lower:([0-9]+)': "
                                     "metric 'gpu.active_ns' is under 'gpu.*'",
                                     0),
            0u)
      << re.error().message;
  auto js = ParseMetricSpec("json@out.json:vouch.wall_s:s:lower:/t");
  ASSERT_FALSE(js);
  EXPECT_NE(js.error().message.find("metric 'vouch.wall_s' is under 'vouch.*'"), std::string::npos);
  auto req = ParseMetricSpec("channel#vouch.wall_s");
  ASSERT_FALSE(req);
  EXPECT_NE(req.error().message.find("'vouch.wall_s' is vouch's own figure"), std::string::npos)
      << req.error().message;
}

TEST(Reserved, AToolFileThatNamesOneIsRefusedNamingTheFile) {
  TempDir dir;
  LegOutputs outs;
  outs.working_dir = dir.path();
  const std::string path = dir.Write(
      "hf.json", R"({"results":[{"command":"gpu.active_ns","mean":1e-9,"parameters":null}]})");
  auto spec = ParseMetricSpec("hyperfine:hf.json");
  ASSERT_TRUE(spec);
  EXPECT_EQ(ErrorOf(ExtractMetrics(*spec, outs)),
            "hyperfine " + path +
                " (hyperfine:hf.json): metric 'gpu.active_ns.mean' is under 'gpu.*', a prefix "
                "vouch reserves for what it measures itself (vouch.*, gpu.*): a leg cannot "
                "report it; give the metric another name");
  // A regex that is not reserved but a stdout line: its match is named by file and line.
  outs.stdout_path = dir.Write("stdout.txt", "x\nwall 5\n");
  auto ok = ParseMetricSpec("regex:my.wall_s:s:lower:wall ([0-9]+)");
  ASSERT_TRUE(ok);
  auto got = ExtractMetrics(*ok, outs);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ((*got)[0].source, "regex " + outs.stdout_path + ":2");
}

// Order never decides: vouch's figure is found even behind a leg's metric of its name (which
// every source refuses; an older record may still hold one).
TEST(Reserved, AReservedNameResolvesToVouchsFigureWhateverTheOrder) {
  std::vector<Metric> leg = {
      Make("gpu.active_ns", 1, "channel m.jsonl:1"), Make("vouch.wall_s", 1, "channel m.jsonl:2"),
      Make("tok_s", 100, "channel m.jsonl:3"), Make("vouch.wall_s", 2.5, std::string(kVouchSource)),
      Make("gpu.active_ns", 7e6, std::string(kGpuTraceSource))};
  ASSERT_NE(FindMetric(leg, "gpu.active_ns"), nullptr);
  EXPECT_EQ(FindMetric(leg, "gpu.active_ns")->value, 7e6);
  EXPECT_EQ(FindMetric(leg, "vouch.wall_s")->value, 2.5);
  EXPECT_EQ(FindMetric(leg, "tok_s")->value, 100);
  // --expect and the summary read the same figure.
  auto e = ParseExpect("vouch.wall_s=1");
  ASSERT_TRUE(e);
  auto v = CheckExpectations({*e}, {leg});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].message, "leg 1: metric 'vouch.wall_s' expected 1, got 2.5");
  auto sums = SummarizeLegs({leg, leg});
  bool saw_wall = false;
  for (const auto& s : sums)
    if (s.name == "vouch.wall_s") {
      saw_wall = true;
      EXPECT_EQ(s.median, 2.5);
    } else if (s.name == "gpu.active_ns") {
      EXPECT_EQ(s.median, 7e6);
    }
  EXPECT_TRUE(saw_wall);
  // Only a leg's metric: nothing is found under the reserved name.
  EXPECT_EQ(FindMetric({Make("gpu.kernels", 3, "hyperfine a.json")}, "gpu.kernels"), nullptr);
}

TEST(Reserved, VouchsFiguresAreAddedOnlyUnderNamesTheLegDoesNotHave) {
  std::vector<Metric> leg = {Make("tok_s", 100, "channel m.jsonl:1")};
  ASSERT_TRUE(AddVouchMetrics(&leg, {Make("vouch.wall_s", 2, std::string(kVouchSource))}));
  ASSERT_EQ(leg.size(), 2u);
  EXPECT_EQ(leg[1].name, "vouch.wall_s");
  leg.insert(leg.begin(), Make("gpu.kernels", 1, "channel m.jsonl:2"));
  auto s = AddVouchMetrics(&leg, {Make("gpu.kernels", 9, std::string(kGpuTraceSource))});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            "metric 'gpu.kernels' is vouch's own figure and the leg reported it too");
}

TEST(Reserved, ANameTwiceFromOneSourceIsAnErrorNotFirstWins) {
  TempDir dir;
  LegOutputs outs;
  outs.working_dir = dir.path();
  // Two nvbench benchmarks of one name: which figure is meant is a guess.
  const std::string state =
      R"({"name":"s","summaries":[{"tag":"t","data":[{"name":"value","type":"float64","value":"V"}]}]})";
  std::string one = state, two = state;
  one.replace(one.find("\"V\""), 3, "\"1\"");
  two.replace(two.find("\"V\""), 3, "\"2\"");
  const std::string path = dir.Write("nv.json", R"({"benchmarks":[{"name":"b","states":[)" + one +
                                                    R"(]},{"name":"b","states":[)" + two + "]}]}");
  auto nv = ParseMetricSpec("nvbench:nv.json");
  ASSERT_TRUE(nv);
  EXPECT_EQ(
      ErrorOf(ExtractAllMetrics({*nv}, outs)),
      "nvbench " + path +
          " (nvbench:nv.json): metric 'b[s].t' appears twice; a leg reports each metric once");
}

}  // namespace
}  // namespace vouch
