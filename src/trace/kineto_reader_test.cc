#include "trace/kineto_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::Slurp;
using testing::Spit;
using testing::TempPath;

const std::string kFixture = std::string(VOUCH_FIXTURES_DIR) + "/kineto_lm_small.json.gz";

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

std::int64_t Count(const Trace& t, GpuOpKind k) {
  std::int64_t n = 0;
  for (const auto& o : t.ops) n += o.kind == k;
  return n;
}

// Every field of two traces, for "the same result whichever way the bytes were batched".
void ExpectSameTrace(const Trace& a, const Trace& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.skipped_by_category, b.skipped_by_category);
  EXPECT_EQ(a.unknown_categories, b.unknown_categories);
  EXPECT_EQ(a.event_count, b.event_count);
  EXPECT_EQ(a.first_ns, b.first_ns);
  EXPECT_EQ(a.last_ns, b.last_ns);
  auto op = [](const GpuOp& o) {
    return std::tuple(o.start_ns, o.end_ns, o.correlation, o.stream, o.bytes, o.name_id, o.device,
                      o.pid, o.kind);
  };
  auto api = [](const ApiCall& c) {
    return std::tuple(c.start_ns, c.end_ns, c.correlation, c.pid, c.tid, c.name_id, c.kind,
                      c.is_launch);
  };
  auto range = [](const Range& r) {
    return std::tuple(r.start_ns, r.end_ns, r.pid, r.tid, r.external_id, r.name_id, r.kind);
  };
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(op(a.ops[i]), op(b.ops[i])) << i;
  ASSERT_EQ(a.api.size(), b.api.size());
  for (std::size_t i = 0; i < a.api.size(); ++i) EXPECT_EQ(api(a.api[i]), api(b.api[i])) << i;
  ASSERT_EQ(a.ranges.size(), b.ranges.size());
  for (std::size_t i = 0; i < a.ranges.size(); ++i)
    EXPECT_EQ(range(a.ranges[i]), range(b.ranges[i])) << i;
}

// Events whose strings and nested values hold what a batch end is looked for ("}, {",
// braces, escaped quotes and backslashes), an escaped key, numbers simdjson must take
// (1.0, 2e0, a leading zero, a string) and a block size for every byte: a batch ends
// everywhere, and every guess at a batch end that is wrong must be caught.
const char kTrickyBatches[] = R"({"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k1 },{ \"},{\" {[", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2.25, "args": {"correlation": 1, "stream": 7, "device": 0}},
{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 9, "dur": 30, "args": {"Input Dims": [[1, 2], []], "list": [{"a": "},{"},{"b": 2}], "External id": 3}},
{"ph": "X", "cat": "kernel", "name": "k2 \\", "pid": 0, "tid": 8, "ts": 13, "dur": 1, "args": {"correlation": 2, "nested": [{"x": 1},{"y": [{"z": 2}, {}]}], "stream": 8, "device": 0}},
{"ph": "X", "c\u0061t": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1.0, "tid": 1, "ts": 9.5, "dur": 0.75, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "1", "ts": 12.0004, "dur": 0.5, "args": {"correlation": 2e0}},
{"ph": "X", "cat": "kernel", "name": "caf\u00e9 \"quoted\" {}", "pid": 007, "tid": 9, "ts": 15, "dur": 3, "args": {"correlation": -5, "stream": 9, "bytes": 12}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 20, "dur": 4, "args": {"bytes": 4096, "stream": 7, "device": 0}},
{"ph": "X", "cat": "user_annotation", "name": "step}, {", "pid": 1, "tid": 1, "ts": 8, "dur": 20, "args": {"External id": 42}},
{"ph": "X", "cat": "brand_new", "name": "x", "ts": 1, "dur": 1, "args": {"a": [{"b": "}, {"},{"c": "\\\\"}]}},
{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "}, {"}}
],
"deviceProperties": [{"id": 0, "name": "GPU }, {"}]}
)";

TEST(KinetoReader, BatchEndsInsideStringsAndNestedArraysGiveExactResults) {
  const std::string json = kTrickyBatches;
  auto whole = ParseKinetoJson(json, "tricky.json");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  const Trace& t = *whole;
  EXPECT_EQ(t.event_count, 10);
  EXPECT_EQ(t.names,
            (std::vector<std::string>{"k1 },{ \"},{\" {[", "k2 \\", "cudaLaunchKernel",
                                      "caf\xc3\xa9 \"quoted\" {}", "Memcpy HtoD", "step}, {"}));
  ASSERT_EQ(t.ops.size(), 4u);
  EXPECT_EQ(t.ops[0].start_ns, 10500);
  EXPECT_EQ(t.ops[0].end_ns, 12750);
  EXPECT_EQ(t.ops[0].correlation, 1);
  EXPECT_EQ(t.ops[0].stream, 7);
  EXPECT_EQ(t.ops[0].device, 0);
  EXPECT_EQ(t.ops[1].start_ns, 13000);
  EXPECT_EQ(t.ops[1].correlation, 2);
  EXPECT_EQ(t.ops[1].stream, 8);
  EXPECT_EQ(t.ops[2].correlation, -5);
  EXPECT_EQ(t.ops[2].stream, 9);
  EXPECT_EQ(t.ops[2].device, -1);  // pid 007 is not a JSON number: unknown, as before
  EXPECT_EQ(t.ops[2].bytes, 12u);
  EXPECT_EQ(t.ops[3].kind, GpuOpKind::kMemcpy);
  EXPECT_EQ(t.ops[3].bytes, 4096u);
  EXPECT_EQ(t.ops[3].end_ns, 24000);
  ASSERT_EQ(t.api.size(), 2u);
  EXPECT_EQ(t.api[0].pid, 1);  // 1.0
  EXPECT_EQ(t.api[0].start_ns, 9500);
  EXPECT_EQ(t.api[0].end_ns, 10250);
  EXPECT_TRUE(t.api[0].is_launch);
  EXPECT_EQ(t.api[1].tid, -1);  // "1" is a string
  EXPECT_EQ(t.api[1].start_ns, 12000);
  EXPECT_EQ(t.api[1].correlation, 2);  // 2e0
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].external_id, 42);
  EXPECT_EQ(t.ranges[0].end_ns, 28000);
  EXPECT_EQ(t.skipped_by_category,
            (std::map<std::string, std::int64_t>{{"(metadata)", 1}, {"cpu_op", 1}}));
  EXPECT_EQ(t.unknown_categories, (std::map<std::string, std::int64_t>{{"brand_new", 1}}));
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0], "GPU }, {");
  EXPECT_EQ(t.first_ns, 8000);
  EXPECT_EQ(t.last_ns, 28000);
  for (std::size_t block = 1; block <= json.size(); ++block) {
    auto b = ParseKinetoJson(json, "tricky.json", block);
    ASSERT_TRUE(b.ok()) << block << ": " << b.error().message;
    ExpectSameTrace(t, *b, "block " + std::to_string(block));
  }
}

TEST(KinetoReader, MalformedEventsAreErrorsWhateverTheBatching) {
  const std::string ev =
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1})";
  const std::string stray = "{\"traceEvents\": [" + ev + "," + ev + ",," + ev + "," + ev + "]}";
  const std::string escape =
      "{\"traceEvents\": [" + ev + "," + ev +
      R"(, {"ph": "X", "cat": "kernel", "name": "bad \q", "ts": 1, "dur": 1},)" + ev + "]}";
  for (std::size_t block : {std::size_t{0}, std::size_t{5}, std::size_t{40}, std::size_t{100}}) {
    auto s = ParseKinetoJson(stray, "stray.json", block);
    ASSERT_FALSE(s.ok()) << block;
    EXPECT_NE(s.error().message.find("stray ','"), std::string::npos) << s.error().message;
    auto e = ParseKinetoJson(escape, "escape.json", block);
    ASSERT_FALSE(e.ok()) << block;
    EXPECT_NE(e.error().message.find("escape.json: malformed trace event"), std::string::npos)
        << e.error().message;
  }
}

TEST(KinetoReader, PlainFileAndGzipGiveTheSameTrace) {
  std::string json = Gunzip(kFixture);
  std::string plain = TempPath("same.json");
  Spit(plain, json);
  auto fromplain = ReadKinetoTrace(plain);
  auto fromgz = ReadKinetoTrace(kFixture);
  auto frommem = ParseKinetoJson(json, kFixture, 4096);
  ASSERT_TRUE(fromplain.ok()) << fromplain.error().message;
  ASSERT_TRUE(fromgz.ok()) << fromgz.error().message;
  ASSERT_TRUE(frommem.ok()) << frommem.error().message;
  ExpectSameTrace(*fromgz, *fromplain, "plain file");
  ExpectSameTrace(*fromgz, *frommem, "4 KiB blocks");
  std::remove(plain.c_str());
}

TEST(ParseMicrosToNs, ExactForSixteenDigits) {
  std::int64_t ns = 0;
  ASSERT_TRUE(ParseMicrosToNs("5090020294577.553", &ns));
  EXPECT_EQ(ns, 5090020294577553);
  ASSERT_TRUE(ParseMicrosToNs("2.272", &ns));
  EXPECT_EQ(ns, 2272);
  ASSERT_TRUE(ParseMicrosToNs("7 ", &ns));
  EXPECT_EQ(ns, 7000);
  ASSERT_TRUE(ParseMicrosToNs("1.2345", &ns));  // the fourth decimal rounds
  EXPECT_EQ(ns, 1235);
  ASSERT_TRUE(ParseMicrosToNs("0.5", &ns));
  EXPECT_EQ(ns, 500);
  ASSERT_TRUE(ParseMicrosToNs("1e3", &ns));
  EXPECT_EQ(ns, 1000000);
  ASSERT_TRUE(ParseMicrosToNs("-3.5", &ns));
  EXPECT_EQ(ns, -3500);
  EXPECT_FALSE(ParseMicrosToNs("\"12\"", &ns));
  EXPECT_FALSE(ParseMicrosToNs("", &ns));
}

TEST(ParseMicrosToNs, TheWholeTokenOrNothing) {
  // The fast path read "5xyz" as 5 us and "7.5.5" as 7.5 us (issue 21).
  std::int64_t ns = 0;
  for (const char* bad : {"5xyz", "7.5.5", "5-3", "5 x", "12345678901234567890x", "1e3x", "1e999"})
    EXPECT_FALSE(ParseMicrosToNs(bad, &ns)) << bad;
  ASSERT_TRUE(ParseMicrosToNs("7.5 \n\t", &ns));
  EXPECT_EQ(ns, 7500);
}

TEST(KinetoReader, ReadsTheH200Fixture) {
  auto t = ReadKinetoTrace(kFixture);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "kineto");
  EXPECT_EQ(Count(*t, GpuOpKind::kKernel), 2209);
  EXPECT_EQ(Count(*t, GpuOpKind::kMemcpy), 1);
  EXPECT_EQ(Count(*t, GpuOpKind::kMemset), 8);
  EXPECT_EQ(t->api.size(), 2312u + 821u);
  EXPECT_EQ(t->ranges.size(), 66u);
  EXPECT_EQ(t->skipped_by_category.at("cpu_op"), 13634);
  EXPECT_EQ(t->skipped_by_category.at("ac2g"), 3128 + 2223);
  EXPECT_TRUE(t->unknown_categories.empty());
  ASSERT_FALSE(t->devices.empty());
  EXPECT_EQ(t->devices[0], "NVIDIA H200");
  // The first kernel, exactly: ts 5090020296962.511 us, dur 2.272 us, correlation 12.
  const GpuOp* first = nullptr;
  for (const auto& o : t->ops)
    if (o.kind == GpuOpKind::kKernel && (!first || o.start_ns < first->start_ns)) first = &o;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->start_ns, 5090020296962511);
  EXPECT_EQ(first->end_ns - first->start_ns, 2272);
  EXPECT_EQ(first->correlation, 12);
  EXPECT_EQ(first->stream, 7);
  EXPECT_EQ(first->device, 0);
}

TEST(KinetoReader, PlainAndGzipAndTinyBlocksAgree) {
  std::string json = Gunzip(kFixture);
  ASSERT_GT(json.size(), 1000000u);
  auto whole = ParseKinetoJson(json, "mem");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  // 4 KiB blocks: most events straddle a block boundary at some point.
  auto tiny = ParseKinetoJson(json, "mem", 4096);
  ASSERT_TRUE(tiny.ok()) << tiny.error().message;
  EXPECT_EQ(whole->ops.size(), tiny->ops.size());
  EXPECT_EQ(whole->api.size(), tiny->api.size());
  EXPECT_EQ(whole->event_count, tiny->event_count);
  EXPECT_EQ(whole->first_ns, tiny->first_ns);
  EXPECT_EQ(whole->last_ns, tiny->last_ns);
  std::string plain = TempPath("plain.json");
  Spit(plain, json);
  auto fromfile = ReadKinetoTrace(plain);
  ASSERT_TRUE(fromfile.ok()) << fromfile.error().message;
  EXPECT_EQ(fromfile->ops.size(), whole->ops.size());
  std::remove(plain.c_str());
}

TEST(KinetoReader, TrickyStringsUnknownCategoriesAndNesting) {
  for (std::size_t block : {std::size_t{0}, std::size_t{7}, std::size_t{64}}) {
    auto t = ParseKinetoJson(Slurp(DataPath("small.json")), "small.json", block);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(Count(*t, GpuOpKind::kKernel), 6) << block;
    EXPECT_EQ(t->unknown_categories.at("brand_new_category"), 2);
    EXPECT_EQ(t->skipped_by_category.at("ac2g"), 1);
    EXPECT_EQ(t->skipped_by_category.at("(metadata)"), 1);
    bool quoted = false;
    for (const auto& n : t->names) quoted = quoted || n == "norm \"quoted\" \\ kernel";
    EXPECT_TRUE(quoted);
  }
}

TEST(KinetoReader, TruncatedFilesAreErrorsNamingTheFile) {
  std::string json = Slurp(DataPath("small.json"));
  for (std::size_t cut : {json.size() / 3, json.size() / 2, json.size() - 3}) {
    auto t = ParseKinetoJson(json.substr(0, cut), "cut.json");
    ASSERT_FALSE(t.ok()) << cut;
    EXPECT_NE(t.error().message.find("cut.json"), std::string::npos);
    EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;
  }
  // A truncated gzip stream.
  std::string gz = Slurp(kFixture);
  std::string path = TempPath("cut.json.gz");
  Spit(path, gz.substr(0, gz.size() / 2));
  auto t = ReadKinetoTrace(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find(path), std::string::npos);
  EXPECT_NE(t.error().message.find("truncated"), std::string::npos) << t.error().message;
  std::remove(path.c_str());
}

TEST(KinetoReader, MalformedAndEmptyInputs) {
  auto empty = ParseKinetoJson("", "empty.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  auto text = ParseKinetoJson("hello world", "text.json");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not JSON"), std::string::npos);
  auto noevents = ParseKinetoJson("{\"schemaVersion\": 1}", "x.json");
  ASSERT_FALSE(noevents.ok());
  EXPECT_NE(noevents.error().message.find("no traceEvents"), std::string::npos);
  auto bad = ParseKinetoJson("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": tru}]}", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.json"), std::string::npos);
  auto notobj = ParseKinetoJson("{\"traceEvents\": [1, 2]}", "n.json");
  ASSERT_FALSE(notobj.ok());
  auto missing = ReadKinetoTrace("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/trace.json"), std::string::npos);
  // A bare array of events is a valid Chrome trace too.
  auto bare = ParseKinetoJson(
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2}]",
      "bare.json");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->ops.size(), 1u);
}

// Issue 12: what a Kineto reader used to drop or cut silently.
std::string OneKernel(const std::string& fields) {
  return R"({"traceEvents": [{"ph": "X", "cat": "kernel", )" + fields +
         R"(, "args": {"device": 0, "stream": 7, "correlation": 1}}]})";
}

TEST(KinetoReader, ANegativeDurationIsCountedAndWarnedAbout) {
  auto t = ParseKinetoJson(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": -5},)"
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 5}]})",
      "neg.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->skipped_by_category.at("kernel (negative duration)"), 1);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("neg.json: 1 'kernel' event(s) with a negative duration"),
            std::string::npos)
      << t->warnings[0];
}

TEST(KinetoReader, ANameThatIsANumberIsKeptAsWritten) {
  auto t = ParseKinetoJson(OneKernel(R"("name": 1234, "ts": 1, "dur": 2)"), "num.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->Name(t->ops[0].name_id), "1234");
  auto obj = ParseKinetoJson(OneKernel(R"("name": {"a": 1}, "ts": 1, "dur": 2)"), "obj.json");
  ASSERT_FALSE(obj.ok());
  EXPECT_NE(obj.error().message.find("obj.json: malformed trace event"), std::string::npos)
      << obj.error().message;
}

TEST(KinetoReader, AKernelWithoutANameIsKeptUnderAnEmptyName) {
  // fuzz/regressions/kineto/nameless_kernel.json (the fuzzer's find): interning the name of a
  // nameless event copied from a null pointer (UB); the cut array is still an error after it.
  auto cut = ParseKinetoJson(R"([{"ph":"X","cat":"kernel","ts":0,"dur":5})", "cut.json");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("cut.json"), std::string::npos) << cut.error().message;
  auto t = ParseKinetoJson(R"([{"ph":"X","cat":"kernel","ts":0,"dur":5},)"
                           R"({"ph":"X","cat":"kernel","name":"","ts":9,"dur":1}])",
                           "nameless.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 2u);
  EXPECT_EQ(t->ops[0].name_id, t->ops[1].name_id);
  EXPECT_EQ(t->Name(t->ops[0].name_id), "");
}

TEST(KinetoReader, TimesPast64BitsAreRefusedNotWrapped) {
  for (const char* fields : {R"("name": "k", "ts": 1e300, "dur": 2)",
                             R"("name": "k", "ts": 4000000000000000, "dur": 4000000000000000)",
                             R"("name": "k", "ts": 1, "dur": -1e300)"}) {
    SCOPED_TRACE(fields);
    auto t = ParseKinetoJson(OneKernel(fields), "big.json");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message.find("big.json: malformed trace event between bytes"),
              std::string::npos)
        << t.error().message;
  }
  // A correlation id of 1e300 is no id (it was an undefined float-to-int conversion).
  auto c = ParseKinetoJson(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,)"
      R"( "args": {"correlation": 1e300}}]})",
      "corr.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->ops[0].correlation, -1);
}

// The reader's fast ways with a time (eight digits at a time, Kineto's three decimals) give
// what the exact parser gives, and refuse what it refuses.
TEST(KinetoReader, TimesAreReadAsTheExactParserReadsThem) {
  for (const char* tok : {"1.234",
                          "1.2345",
                          "1.2344",
                          "1.23",
                          "1.2",
                          "1.",
                          "12.345e1",
                          "1.234 ",
                          "1.234\n",
                          "5090020296962.511",
                          "123456789012345.999",
                          "1234567890123456.5",
                          "0.000",
                          "7",
                          "1.2340",
                          "1.234x",
                          "1.234.5",
                          "1.23a",
                          "01.234",
                          "1.234e",
                          "1.234E2",
                          "-1.234",
                          "99999999.999"}) {
    SCOPED_TRACE(tok);
    std::int64_t want = 0;
    const bool ok = ParseMicrosToNs(tok, &want);
    auto t =
        ParseKinetoJson(OneKernel(std::string(R"("name": "k", "dur": 1, "ts": )") + tok), "t.json");
    ASSERT_EQ(t.ok(), ok) << (t ? "" : t.error().message);
    if (ok) {
      ASSERT_EQ(t->ops.size(), 1u);
      EXPECT_EQ(t->ops[0].start_ns, want);
    }
  }
}

// Names, categories and keys are searched 16 bytes at a time for their closing quote or a
// backslash: every length around those boundaries, with an escape at every place in it or
// none, reads as the exact parser unescapes it; a bad escape anywhere in an ignored args key
// refuses the trace, folded or not.
TEST(KinetoReader, StringsAndKeysOfEveryLengthAroundTheSixteenByteScan) {
  std::string json = R"({"traceEvents": [)";
  std::vector<std::string> want;
  int corr = 0;
  for (std::size_t len = 0; len <= 40; ++len) {
    for (std::size_t at = 0; at <= len + 1; ++at) {  // at == len + 1: no escape
      std::string raw(len, 'k'), text(len, 'k');
      if (at <= len) {
        raw.insert(at, "\\u0041");
        text.insert(at, "A");
      }
      // An unknown args key as long as the name (escaped the same way), and the correlation
      // key escaped: both must be recognised by their unescaped text.
      json +=
          fmt::format(R"({}{{"ph": "X", "c\u0061t": "kernel", "name": "{}", "ts": {}, "dur": 1, )"
                      R"("args": {{"x{}": 1, "correl\u0061tion": {}}}}})",
                      corr ? ", " : "", raw, 1000 + corr, raw, corr);
      want.push_back(text);
      ++corr;
    }
  }
  json += "]}";
  auto t = ParseKinetoJson(json, "lengths.json", 0);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(t->names[t->ops[i].name_id], want[i]) << i;
    EXPECT_EQ(t->ops[i].correlation, static_cast<std::int64_t>(i));
  }
  // A bad escape ("\q") at each place in a 40-byte ignored args key.
  for (std::size_t at = 0; at < 40; at += 3) {
    std::string key(40, 'z');
    key.insert(at, "\\q");
    std::string bad = fmt::format(
        R"({{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, )"
        R"("args": {{"{}": 1}}}}]}})",
        key);
    auto r = ParseKinetoJson(bad, "bad.json", 0);
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_NE(r.error().message.find("bad.json: malformed trace event"), std::string::npos)
        << r.error().message;
    auto folded = SummarizeKinetoJson(bad, "bad.json", 0);
    ASSERT_FALSE(folded.ok()) << at;
    EXPECT_EQ(folded.error().message, r.error().message);
  }
}

}  // namespace
}  // namespace vouch::trace
