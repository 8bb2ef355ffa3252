#include "trace/cupti_reader.h"

#include <gtest/gtest.h>

#include "trace/reader.h"
#include "trace/summary.h"
#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::Slurp;

constexpr const char* kHeader =
    R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":7,"clock":"CLOCK_REALTIME","timestamp_offset_ns":0,"ok":true})";
constexpr const char* kFooter = R"({"type":"footer","kernels":1,"dropped":0})";

std::string Lines(std::initializer_list<std::string> lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(CuptiReader, ReadsTheSmallFixture) {
  auto t = ReadTrace(DataPath("cupti_small.jsonl"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "vouch-cupti");
  EXPECT_FALSE(t->partial);
  EXPECT_EQ(t->dropped_records, 0);
  EXPECT_TRUE(t->warnings.empty()) << t->warnings.front();
  EXPECT_EQ(t->command, "python3 decode.py");
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0], "NVIDIA H200");
  int kernels = 0, graph = 0, copies = 0, sets = 0;
  for (const auto& o : t->ops) {
    kernels += o.kind == GpuOpKind::kKernel;
    copies += o.kind == GpuOpKind::kMemcpy;
    sets += o.kind == GpuOpKind::kMemset;
    if (o.graph_id != 0) {
      ++graph;
      EXPECT_EQ(o.graph_id, 5u);
      EXPECT_EQ(t->Name(o.name_id), "graph_node_kernel");
    }
    EXPECT_EQ(o.pid, 4242);
  }
  EXPECT_EQ(kernels, 6);
  EXPECT_EQ(graph, 2);
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(sets, 1);
  ASSERT_EQ(t->api.size(), 6u);
  int launches = 0;
  for (const auto& a : t->api) launches += a.is_launch;
  // The driver cuLaunchKernel inside the runtime cudaLaunchKernel is not a second launch.
  EXPECT_EQ(launches, 5);
  ASSERT_EQ(t->ranges.size(), 2u);
  EXPECT_EQ(t->Name(t->ranges[0].name_id), "decode_step");
  EXPECT_EQ(t->ranges[0].tid, 77);
  EXPECT_EQ(t->ranges[0].pid, 4242);
  EXPECT_EQ(t->ranges[0].end_ns - t->ranges[0].start_ns, 100000);
  EXPECT_EQ(t->skipped_by_category.at("nvtx_mark"), 1);
  EXPECT_EQ(t->first_ns, 1764412345000100000);
  EXPECT_EQ(t->last_ns, 1764412345003014000);
}

TEST(CuptiReader, SummaryOverNvtxRangesAttributesByCorrelation) {
  auto t = ReadTrace(DataPath("cupti_small.jsonl"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  SummaryOptions o;
  o.window = "decode_step";
  auto s = Summarize(*t, o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->instances.size(), 2u);
  EXPECT_EQ(s->instances[0].figures.kernel_count, 2);
  EXPECT_EQ(s->instances[0].figures.kernel_union_ns, 25000);
  EXPECT_EQ(s->instances[1].figures.kernel_union_ns, 27000);
  EXPECT_EQ(s->instances[1].figures.kernel_sum_ns, 28000);
  EXPECT_EQ(s->total.launch_api_count, 4);
}

TEST(CuptiReader, OffsetIsSubtracted) {
  std::string header =
      R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":7,"timestamp_offset_ns":1000,"ok":true})";
  auto t = ParseCuptiTrace(Lines({header, R"({"t":"n","id":0,"v":"k"})",
                                  R"({"t":"k","s":5000,"e":6000,"corr":1,"n":0})", kFooter}),
                           "x.jsonl");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].start_ns, 4000);
  EXPECT_EQ(t->ops[0].end_ns, 5000);
}

TEST(CuptiReader, PartialFileKeepsWhatWasFlushed) {
  // No footer, a signal line, a truncated last line: read, marked partial, three warnings.
  auto t = ParseCuptiTrace(
      Lines({kHeader, R"({"t":"n","id":0,"v":"k"})",
             R"({"t":"k","s":5000,"e":6000,"corr":1,"n":0})",
             R"({"t":"ms","id":1,"ts":4000,"tid":1,"n":0})", R"({"t":"signal","sig":15})"}) +
          R"({"t":"k","s":7000,"e":80)",
      "killed.jsonl");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->partial);
  EXPECT_EQ(t->ops.size(), 1u);
  EXPECT_TRUE(t->ranges.empty());
  std::string all;
  for (const auto& w : t->warnings) all += w + "\n";
  EXPECT_NE(all.find("killed.jsonl:6: the last line is truncated"), std::string::npos) << all;
  EXPECT_NE(all.find("partial trace: no footer, the process (pid 7) did not exit cleanly"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("received SIGTERM"), std::string::npos) << all;
  EXPECT_NE(all.find("1 NVTX range(s) never ended and were left out (k x1)"), std::string::npos)
      << all;
}

TEST(CuptiReader, DropsAreReportedNeverSilent) {
  auto t = ParseCuptiTrace(Lines({kHeader, R"({"t":"drop","n":12})", R"({"t":"drop","n":3})",
                                  R"({"type":"footer","dropped":15})"}),
                           "d.jsonl");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dropped_records, 15);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("CUPTI dropped 15 record(s)"), std::string::npos);
  SummaryOptions o;
  auto s = Summarize(*t, o);
  ASSERT_TRUE(s.ok());
  bool found = false;
  for (const auto& w : s->warnings) found = found || w.find("dropped 15") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(CuptiReader, HostileInputsAreErrorsNamingFileAndLine) {
  struct Case {
    std::string text, want;
  };
  std::vector<Case> cases = {
      {"", "e.jsonl: empty file"},
      {"{\"traceEvents\": []}\n", "e.jsonl:1: not a vouch GPU trace"},
      {"garbage\n", "e.jsonl:1: not a vouch GPU trace"},
      {Lines({R"({"type":"header","format":"vouch-gpu-trace","version":2,"ok":true})"}),
       "format version 2"},
      {Lines({R"({"type":"header","format":"vouch-gpu-trace","version":1,"ok":false})"}),
       "could not enable CUPTI"},
      {Lines({kHeader, R"({"t":"k","s":1,"e":2,"n":9})", kFooter}),
       "e.jsonl:2: name id 9 is used before a name line defines it"},
      {Lines({kHeader, R"({"t":"n","id":0,"v":"k"})", R"({"t":"k","s":5,"e":2,"n":0})"}),
       "e.jsonl:3: a GPU record ends (2) before it starts (5)"},
      {Lines({kHeader, R"({"t":"n","id":0,"v":"k"})", R"({"t":"k","e":2,"n":0})"}),
       "e.jsonl:3: record lacks the integer field \"s\""},
      {Lines({kHeader, "{not json", kFooter}), "e.jsonl:2: malformed JSON line"},
      {Lines({kHeader, R"({"x":1})"}), "e.jsonl:2: record without a \"t\" field"},
      {Lines({kHeader, kFooter, R"({"t":"drop","n":1})"}), "e.jsonl:3: a record after the footer"},
      {Lines({kHeader, R"({"t":"n","id":0,"v":"r"})", R"({"t":"ms","id":1,"ts":9,"n":0})",
              R"({"t":"me","id":1,"ts":3})"}),
       "e.jsonl:4: NVTX range 1 ends before it starts"},
  };
  for (const auto& c : cases) {
    auto t = ParseCuptiTrace(c.text, "e.jsonl");
    ASSERT_FALSE(t.ok()) << c.want;
    EXPECT_NE(t.error().message.find(c.want), std::string::npos)
        << t.error().message << " / want " << c.want;
  }
}

TEST(CuptiReader, UnknownRecordsAreCountedNotGuessed) {
  auto t = ParseCuptiTrace(Lines({kHeader, R"({"t":"future","x":1})", kFooter}), "u.jsonl");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->unknown_categories.at("future"), 1);
}

TEST(CuptiReader, MergeKeepsEveryProcess) {
  auto a = ParseCuptiTrace(
      Lines({kHeader, R"({"t":"n","id":0,"v":"k1"})", R"({"t":"k","s":1,"e":2,"n":0})", kFooter}),
      "a");
  std::string hb = R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":8,"ok":true})";
  auto b =
      ParseCuptiTrace(Lines({hb, R"({"t":"n","id":0,"v":"k2"})", R"({"t":"n","id":1,"v":"k1"})",
                             R"({"t":"k","s":3,"e":5,"n":1})"}),
                      "b");
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Trace> v;
  v.push_back(*a);
  v.push_back(*b);
  Trace m = MergeTraces(std::move(v), "leg");
  ASSERT_EQ(m.ops.size(), 2u);
  EXPECT_EQ(m.Name(m.ops[0].name_id), "k1");
  EXPECT_EQ(m.Name(m.ops[1].name_id), "k1");
  EXPECT_EQ(m.ops[1].pid, 8);
  EXPECT_TRUE(m.partial);  // b has no footer
  EXPECT_EQ(m.first_ns, 1);
  EXPECT_EQ(m.last_ns, 5);
}

TEST(CuptiReader, DetectsByContent) {
  EXPECT_TRUE(LooksLikeCuptiTrace(Slurp(DataPath("cupti_small.jsonl")).substr(0, 300)));
  EXPECT_FALSE(LooksLikeCuptiTrace(R"({"traceEvents":[]})"));
}

}  // namespace
}  // namespace vouch::trace
