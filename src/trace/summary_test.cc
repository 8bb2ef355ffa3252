#include "trace/summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trace/kineto_reader.h"
#include "trace/reader.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::RunCommand;

const std::string kFixture = std::string(VOUCH_FIXTURES_DIR) + "/kineto_lm_small.json.gz";

Summary MustSummarize(const std::string& path, const std::string& window = "") {
  auto t = ReadTrace(path);
  EXPECT_TRUE(t.ok()) << t.error().message;
  SummaryOptions opt;
  opt.window = window;
  auto s = Summarize(*t, opt);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

// Runs tests/data/trace/independent_summary.py; an empty object when python3 is missing.
nlohmann::json Independent(const std::string& path, const std::string& window) {
  int rc = 0;
  std::string cmd = "python3 " + DataPath("independent_summary.py") + " " + path +
                    (window.empty() ? "" : " --window " + window) + " 2>&1";
  std::string out = RunCommand(cmd, &rc);
  EXPECT_EQ(rc, 0) << out;
  return nlohmann::json::parse(out);
}

bool HavePython() {
  int rc = 0;
  RunCommand("python3 -c 'import gzip, json, decimal' 2>/dev/null", &rc);
  return rc == 0;
}

void ExpectFiguresMatch(const Figures& f, const nlohmann::json& j, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(f.elapsed_ns, j["elapsed_ns"].get<std::int64_t>());
  EXPECT_EQ(f.gpu_op_count, j["gpu_operation_count"].get<std::int64_t>());
  EXPECT_EQ(f.kernel_count, j["kernel_count"].get<std::int64_t>());
  EXPECT_EQ(f.kernel_sum_ns, j["kernel_sum_ns"].get<std::int64_t>());
  EXPECT_EQ(f.kernel_union_ns, j["kernel_union_ns"].get<std::int64_t>());
  EXPECT_EQ(f.gpu_span_ns, j["gpu_span_ns"].get<std::int64_t>());
  EXPECT_EQ(f.gaps.count, j["gap_count"].get<std::int64_t>());
  EXPECT_EQ(f.gaps.total_ns, j["gap_total_ns"].get<std::int64_t>());
  EXPECT_EQ(f.gaps.max_ns, j["gap_max_ns"].get<std::int64_t>());
  EXPECT_EQ(f.launch_api_count, j["launch_api_count"].get<std::int64_t>());
  EXPECT_EQ(f.launch_api_union_ns, j["launch_api_union_ns"].get<std::int64_t>());
  EXPECT_EQ(f.launch_api_overlap_ns, j["launch_api_overlap_ns"].get<std::int64_t>());
}

void ExpectTopKernelsMatch(const Summary& s, const nlohmann::json& j) {
  EXPECT_EQ(s.kernels.size(), j["kernel_names"].get<std::size_t>());
  const auto& top = j["top_kernels"];
  ASSERT_LE(top.size(), s.kernels.size());
  for (std::size_t i = 0; i < top.size(); ++i) {
    SCOPED_TRACE(s.kernels[i].name);
    EXPECT_EQ(s.kernels[i].name, top[i]["name"].get<std::string>());
    EXPECT_EQ(s.kernels[i].count, top[i]["count"].get<std::int64_t>());
    EXPECT_EQ(s.kernels[i].total_ns, top[i]["total_ns"].get<std::int64_t>());
    EXPECT_DOUBLE_EQ(s.kernels[i].median_ns, top[i]["median_ns"].get<double>());
    EXPECT_EQ(s.kernels[i].min_ns, top[i]["min_ns"].get<std::int64_t>());
    EXPECT_EQ(s.kernels[i].max_ns, top[i]["max_ns"].get<std::int64_t>());
  }
}

TEST(SummaryVsIndependentPython, WholeTrace) {
  if (!HavePython()) GTEST_SKIP() << "python3 is missing";
  auto s = MustSummarize(kFixture);
  auto j = Independent(kFixture, "");
  ExpectFiguresMatch(s.total, j["totals"], "whole trace");
  ExpectTopKernelsMatch(s, j);
  // Pinned too, so that a change in both implementations still shows.
  EXPECT_EQ(s.total.kernel_count, 2209);
  EXPECT_EQ(s.total.kernel_sum_ns, 24580592);
  EXPECT_EQ(s.total.kernel_union_ns, 24551240);
  EXPECT_EQ(s.total.gpu_span_ns, 80128384);
}

TEST(SummaryVsIndependentPython, DecodeStepWindow) {
  if (!HavePython()) GTEST_SKIP() << "python3 is missing";
  auto s = MustSummarize(kFixture, "decode_step");
  auto j = Independent(kFixture, "decode_step");
  ASSERT_EQ(s.instances.size(), 32u);
  ASSERT_EQ(j["instance_count"].get<std::size_t>(), 32u);
  ExpectFiguresMatch(s.total, j["totals"], "aggregate");
  for (std::size_t i = 0; i < s.instances.size(); ++i)
    ExpectFiguresMatch(s.instances[i].figures, j["instances"][i], "instance " + std::to_string(i));
  ExpectTopKernelsMatch(s, j);
  EXPECT_EQ(s.total.kernel_count, 2144);
  EXPECT_EQ(s.total.kernel_sum_ns, 22803292);
}

TEST(SummaryVsIndependentPython, SmallHandComputedTrace) {
  if (!HavePython()) GTEST_SKIP() << "python3 is missing";
  auto s = MustSummarize(DataPath("small.json"), "decode_step");
  auto j = Independent(DataPath("small.json"), "decode_step");
  ExpectFiguresMatch(s.total, j["totals"], "small");
  // By hand: kernels 10+5 and 12+6 us; spans 27.5 and 29 us; gaps 5 and 6 us; launch API
  // union 4+4 us of which 4 us overlap the first window's kernels.
  EXPECT_EQ(s.total.kernel_sum_ns, 33000);
  EXPECT_EQ(s.total.gpu_span_ns, 56500);
  EXPECT_EQ(s.total.gaps.count, 2);
  EXPECT_EQ(s.total.gaps.total_ns, 11000);
  EXPECT_EQ(s.total.gaps.max_ns, 6000);
  EXPECT_EQ(s.total.launch_api_union_ns, 8000);
  EXPECT_EQ(s.total.launch_api_overlap_ns, 4000);
  EXPECT_EQ(s.total.memcpy_count, 1);
  EXPECT_EQ(s.total.memcpy_bytes, 1024u);
  EXPECT_EQ(s.total.memset_count, 1);
  EXPECT_DOUBLE_EQ(s.total.launch_overlap_percent(), 50.0);
}

TEST(Summary, WholeTraceWithPhasesWarnsAndAsksWhichAnnotation) {
  auto s = MustSummarize(kFixture);
  ASSERT_EQ(s.phases.size(), 2u);
  EXPECT_EQ(s.phases.at("decode_step"), 32);
  EXPECT_EQ(s.phases.at("prefill"), 1);
  bool warned = false;
  for (const auto& w : s.warnings)
    warned = warned || (w.find("Which annotation?") != std::string::npos &&
                        w.find("--window decode_step") != std::string::npos &&
                        w.find("prefill") != std::string::npos);
  EXPECT_TRUE(warned);
  auto d = MustSummarize(kFixture, "decode_step");
  for (const auto& w : d.warnings) EXPECT_EQ(w.find("Which annotation?"), std::string::npos);
}

TEST(Summary, UnknownWindowIsAnErrorListingTheNames) {
  auto t = ReadTrace(kFixture);
  ASSERT_TRUE(t.ok());
  SummaryOptions opt;
  opt.window = "decode_stpe";
  auto s = Summarize(*t, opt);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no annotation or NVTX range named 'decode_stpe'"),
            std::string::npos);
  EXPECT_NE(s.error().message.find("did you mean 'decode_step'"), std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("prefill (1)"), std::string::npos);
}

TEST(Summary, TraceWithoutKernelsIsClearlyEmpty) {
  auto s = MustSummarize(DataPath("no_kernels.json"));
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.total.kernel_count, 0);
  EXPECT_TRUE(s.kernels.empty());
  EXPECT_TRUE(s.ranking.empty());
  std::string text = RenderSummaryText(s);
  EXPECT_NE(text.find("no GPU work"), std::string::npos);
  EXPECT_TRUE(SummaryToJson(s)["empty"].get<bool>());
  auto w = MustSummarize(DataPath("no_kernels.json"), "decode_step");
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.instances.size(), 1u);
}

TEST(Summary, UnknownCategoriesAreCountedAndWarned) {
  auto s = MustSummarize(DataPath("small.json"));
  EXPECT_EQ(s.unknown_categories.at("brand_new_category"), 2);
  bool warned = false;
  for (const auto& w : s.warnings)
    warned = warned || w.find("unknown category 'brand_new_category'") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Summary, MixtureFlagAndComponentsWithRules) {
  auto t = ReadTrace(DataPath("small.json"));
  ASSERT_TRUE(t.ok());
  auto rules = ParseRules("# test rules\ngemm = gemm\n", "rules.txt");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  SummaryOptions opt;
  opt.rules = *rules;
  auto s = Summarize(*t, opt);
  ASSERT_TRUE(s.ok());
  // gemm_big: 60, 10, 12 us: median 12, max 60 = 5x median: a mixture (prefill + decode).
  ASSERT_EQ(s->kernels[0].name, "gemm_big{lambda()#1}, {x}");
  EXPECT_TRUE(s->kernels[0].mixture);
  EXPECT_DOUBLE_EQ(s->kernels[0].median_ns, 12000);
  // norm: 30, 5, 6 us: median 6, max 30 = 5x: also a mixture.
  EXPECT_TRUE(s->kernels[1].mixture);
  ASSERT_EQ(s->components.size(), 2u);
  EXPECT_EQ(s->components[0].name, "gemm");
  EXPECT_EQ(s->components[0].total_ns, 82000);
  EXPECT_EQ(s->components[0].launches, 3);
  EXPECT_EQ(s->components[1].name, "other");
  EXPECT_EQ(s->components[1].total_ns, 41000);
  EXPECT_NEAR(s->components[0].percent_of_kernel_time, 100.0 * 82 / 123, 1e-9);
  // The decode window alone is no mixture.
  opt.window = "decode_step";
  auto d = Summarize(*t, opt);
  ASSERT_TRUE(d.ok());
  for (const auto& k : d->kernels) EXPECT_FALSE(k.mixture) << k.name;
}

TEST(Rules, FormatsAndErrors) {
  auto j = ParseRules(
      R"({"components":[{"name":"gemm","pattern":"gemm|cutlass"},{"name":"attn","pattern":"flash"}]})",
      "r.json");
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->Classify("cutlass_80_tensorop"), "gemm");
  EXPECT_EQ(j->Classify("FLASH_fwd"), "attn");  // case-insensitive
  EXPECT_EQ(j->Classify("layer_norm"), "other");
  auto first = ParseRules("a = x\nb = x\n", "r.txt");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->Classify("x"), "a");  // first match wins
  auto bad = ParseRules("a = (\n", "r.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a valid regular expression"), std::string::npos);
  auto noeq = ParseRules("just words\n", "r.txt");
  ASSERT_FALSE(noeq.ok());
  EXPECT_NE(noeq.error().message.find("r.txt:1"), std::string::npos);
  EXPECT_FALSE(ParseRules("{\"x\": 1}", "r.json").ok());
  EXPECT_FALSE(ParseRules("", "r.txt").ok());
  EXPECT_FALSE(LoadRules("/nonexistent/rules").ok());
  EXPECT_EQ(DefaultRules().compiled.size(), DefaultRules().rules.size());
}

TEST(Intervals, UnionAndIntersection) {
  EXPECT_EQ(UnionLength({{0, 10}, {5, 15}, {20, 25}, {25, 30}}), 25);
  EXPECT_EQ(UnionLength({}), 0);
  EXPECT_EQ(UnionLength({{5, 5}, {7, 3}}), 0);
  EXPECT_EQ(IntersectionOfUnions({{0, 10}, {20, 30}}, {{5, 25}}), 10);
  EXPECT_EQ(IntersectionOfUnions({{0, 10}}, {{10, 20}}), 0);
}

TEST(Diff, ComponentsKernelsAddedRemovedAndLengths) {
  auto a = MustSummarize(DataPath("small.json"), "decode_step");
  auto b = a;
  b.path = "b";
  // B: the norm kernel gone, a new kernel, the gemm twice as slow.
  b.kernels.erase(
      std::remove_if(b.kernels.begin(), b.kernels.end(),
                     [](const KernelRow& k) { return k.name.find("norm") != std::string::npos; }),
      b.kernels.end());
  b.kernels[0].total_ns *= 2;
  b.kernels.push_back(KernelRow{"new_kernel", "other", 1, 500, 500, 500, 500, 500, false, 0});
  auto d = DiffSummaries(a, b);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->added.size(), 1u);
  EXPECT_EQ(d->added[0], "new_kernel");
  ASSERT_EQ(d->removed.size(), 1u);
  EXPECT_EQ(d->removed[0], "norm \"quoted\" \\ kernel");
  const DiffRow* gemm = nullptr;
  for (const auto& r : d->kernels)
    if (r.name.rfind("gemm_big", 0) == 0) gemm = &r;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->change_ns(), 22000);
  EXPECT_DOUBLE_EQ(*gemm->percent_change(), 100.0);
  auto j = DiffToJson(*d);
  EXPECT_EQ(j["added_kernels"][0], "new_kernel");
  // Two lengths: 100 and 200 tokens; gemm doubled: 220 ns per token, all of it scales.
  auto l = DiffSummaries(a, b, std::make_pair(100.0, 200.0));
  ASSERT_TRUE(l.ok());
  for (const auto& r : l->kernels)
    if (r.name.rfind("gemm_big", 0) == 0) {
      EXPECT_DOUBLE_EQ(*r.ns_per_unit_length, 220.0);
      EXPECT_DOUBLE_EQ(*r.fixed_ns, 0.0);
      EXPECT_EQ(r.growth, "scales");
    }
  EXPECT_FALSE(DiffSummaries(a, b, std::make_pair(100.0, 100.0)).ok());
  EXPECT_NE(RenderDiffText(*l).find("ns/unit len"), std::string::npos);
}

TEST(Diff, SameTraceHasNoChange) {
  auto a = MustSummarize(kFixture, "decode_step");
  auto d = DiffSummaries(a, a);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->added.empty());
  EXPECT_TRUE(d->removed.empty());
  for (const auto& r : d->kernels) EXPECT_EQ(r.change_ns(), 0);
}

// The streamed --json output is the tree's dump, byte for byte, with and without instances.
TEST(Summary, StreamedJsonIsTheSameBytesAsTheTree) {
  for (const char* window : {"decode_step", ""}) {
    SCOPED_TRACE(window);
    auto s = MustSummarize(kFixture, window);
    std::string streamed;
    std::size_t pieces = 0;
    StreamSummaryJson(s, [&](std::string_view p) {
      streamed.append(p);
      ++pieces;
    });
    EXPECT_EQ(streamed, SummaryToJson(s).dump(2));
    EXPECT_GE(pieces, 1u);
  }
  Summary empty;
  std::string streamed;
  StreamSummaryJson(empty, [&](std::string_view p) { streamed.append(p); });
  EXPECT_EQ(streamed, SummaryToJson(empty).dump(2));
}

// Overlapping instances whose sums pass 64 bits: refused, never wrapped to a negative time.
TEST(Summary, InstanceSumsPast64BitsAreRefused) {
  Trace t;
  t.path = "huge.json";
  NameTable names(&t.names);
  std::uint32_t win = names.Intern("step"), k = names.Intern("k");
  const std::int64_t big = kMaxTimeNs / 4;
  GpuOp op;
  op.start_ns = 0;
  op.end_ns = big;
  op.name_id = k;
  op.device = 0;
  t.ops.push_back(op);
  for (int i = 0; i < 40; ++i) {  // 40 nested GPU ranges over the same op
    Range r;
    r.kind = RangeKind::kGpu;
    r.start_ns = 0;
    r.end_ns = big;
    r.name_id = win;
    t.ranges.push_back(r);
  }
  SummaryOptions opt;
  opt.window = "step";
  auto s = Summarize(t, opt);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("huge.json: the window 'step' adds up to more than 2^63"),
            std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace vouch::trace
