// Issue 21, class 3, through the real binary: numbers are numbers (the whole token), finite
// after every scale, exact where promised (integers compared as integers), and in range (times,
// counts, markers, timeouts). Each test failed on main before the fix.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 3 --min-busy-pct 10";

class ForgeNumbersCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 60) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(D(rel), std::ios::binary) << text;
  }
  // The metric NAME of leg I of the record in OUT.
  json LegMetric(const std::string& out, std::size_t i, const std::string& name) const {
    const json rec = Json(out + "/record.json");
    for (const auto& m : rec["legs"][i]["metrics"])
      if (m["name"] == name) return m;
    return json();
  }
  std::string Reasons(const std::string& out, std::size_t i) const {
    return Json(out + "/record.json")["legs"][i]["reasons"].dump();
  }
};

// A Kineto trace with one kernel whose "dur" is DUR, written as is.
std::string KinetoWithDur(const std::string& dur) {
  return fmt::format(
      "{{\"schemaVersion\": 1, \"traceEvents\": [\n"
      "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": "
      "1000, \"dur\": 60, \"args\": {{\"correlation\": 1}}}},\n"
      "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": "
      "2000, \"dur\": {}, \"args\": {{\"correlation\": 2}}}}\n"
      "]}}\n",
      dur);
}

TEST_F(ForgeNumbersCli, AKinetoDurationIsTheWholeToken) {
  Write("ok.json", KinetoWithDur("5"));
  auto ok = Vouch("trace summarize ok.json --json");
  ASSERT_EQ(ok.rc, 0) << ok.out;
  for (const std::string dur : {"5xyz", "7.5.5", "5-3", "1e999"}) {
    SCOPED_TRACE(dur);
    Write("t.json", KinetoWithDur(dur));
    auto r = Vouch("trace summarize t.json");
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_TRUE(Has(r.out, "t.json")) << r.out;
    EXPECT_FALSE(Has(r.out, "kernel")) << "a kernel time was reported:\n" << r.out;
  }
}

TEST_F(ForgeNumbersCli, NcuFiguresThatOverflowAfterTheirUnitAreLeftOutNotInf) {
  Write("k.csv",
        "\"ID\",\"Process ID\",\"Kernel Name\",\"Device\",\"gpu__time_duration.sum\","
        "\"sm__cycles_elapsed.avg.per_second\"\n"
        "\"\",\"\",\"\",\"\",\"second\",\"cycle/nsecond\"\n"
        "\"0\",\"1\",\"big\",\"0\",\"1e300\",\"1e307\"\n"
        "\"1\",\"1\",\"fine\",\"0\",\"0.000002\",\"1.5\"\n");
  auto r = Vouch("ncu k.csv");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(Has(r.out, "inf")) << r.out;
  EXPECT_TRUE(Has(r.out, "kernel 0: duration '1e300 second'")) << r.out;
  EXPECT_TRUE(Has(r.out, "is not a finite number; duration left out")) << r.out;
  EXPECT_TRUE(Has(r.out, "SM frequency left out")) << r.out;
  auto j = Vouch("ncu --json k.csv");
  ASSERT_EQ(j.rc, 0) << j.out;
  auto doc = json::parse(j.out.substr(j.out.find('{')));
  ASSERT_EQ(doc["kernels"].size(), 2u) << j.out;
  EXPECT_TRUE(doc["kernels"][0]["duration_ns"].is_null()) << j.out;
  EXPECT_TRUE(doc["kernels"][0]["sm_frequency_mhz"].is_null()) << j.out;
  EXPECT_DOUBLE_EQ(doc["kernels"][1]["duration_ns"].get<double>(), 2000);
  EXPECT_DOUBLE_EQ(doc["kernels"][1]["sm_frequency_mhz"].get<double>(), 1500);
}

TEST_F(ForgeNumbersCli, ExpectComparesIntegersAsIntegers) {
  // 2^53 and 2^53 + 1 are one double: only an integer comparison tells them apart.
  Script("leg.sh",
         "sleep 0.7\necho '{\"name\":\"ops\",\"value\":9007199254740992}' >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --expect ops=9007199254740993 -- ./leg.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "expectation violated")) << r.out;
  auto v = Json("r/record.json")["expectation_violations"];
  ASSERT_EQ(v.size(), 1u) << r.out;
  EXPECT_EQ(v[0]["expected"], "9007199254740993");
  EXPECT_EQ(v[0]["got"], "9007199254740992");
  // The leg that reported 2^53 + 1 exactly passes; so does 2^53 against 2^53.
  Script("leg2.sh",
         "sleep 0.7\necho '{\"name\":\"ops\",\"value\":9007199254740993}' >> \"$VOUCH_METRICS\"\n");
  auto ok = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out s --expect ops=9007199254740993 -- ./leg2.sh", kFast));
  EXPECT_EQ(ok.rc, 0) << ok.out;
  auto eq = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out t --expect ops=9007199254740992 -- ./leg.sh", kFast));
  EXPECT_EQ(eq.rc, 0) << eq.out;
}

// A vouch GPU trace (docs/gpu-trace.md) with LINES between its header and footer.
std::string CuptiTrace(const std::string& lines) {
  return "{\"type\":\"header\",\"format\":\"vouch-gpu-trace\",\"version\":1,\"pid\":42,"
         "\"timestamp_offset_ns\":0,\"ok\":true}\n"
         "{\"t\":\"n\",\"id\":0,\"v\":\"k\"}\n"
         "{\"t\":\"k\",\"s\":1000,\"e\":2000,\"dev\":0,\"str\":7,\"corr\":1,\"n\":0}\n" +
         lines + "{\"type\":\"footer\",\"dropped\":0}\n";
}

TEST_F(ForgeNumbersCli, CuptiDropCountsAreCountsAndNeverWrap) {
  Write("neg.jsonl", CuptiTrace("{\"t\":\"drop\",\"n\":5}\n{\"t\":\"drop\",\"n\":-5}\n"));
  auto r = Vouch("trace summarize neg.jsonl");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "neg.jsonl:5: \"n\" is negative (-5): not a count of dropped records"))
      << r.out;
  // Two counts that wrap int64 to a negative sum: the drop warning used to vanish.
  Write("wrap.jsonl", CuptiTrace("{\"t\":\"drop\",\"n\":9223372036854775807}\n"
                                 "{\"t\":\"drop\",\"n\":9223372036854775807}\n"));
  r = Vouch("trace summarize wrap.jsonl");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "wrap.jsonl:5: dropped records")) << r.out;
  EXPECT_TRUE(Has(r.out, "overflows a 64-bit integer")) << r.out;
  Write("neg_footer.jsonl",
        CuptiTrace("").replace(CuptiTrace("").find("\"dropped\":0"), 11, "\"dropped\":-3"));
  r = Vouch("trace summarize neg_footer.jsonl");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "neg_footer.jsonl:4: \"dropped\" is negative (-3)")) << r.out;
}

TEST_F(ForgeNumbersCli, TracerTimesAreCheckedWhenTheOffsetIsTakenOff) {
  // A time inside int64 whose offset takes it past 2^62 ns (or wraps it) is no time.
  std::string t = CuptiTrace("");
  const std::string zero = "\"timestamp_offset_ns\":0";
  t.replace(t.find(zero), zero.size(), "\"timestamp_offset_ns\":-9223372036854775000");
  Write("off.jsonl", t);
  auto r = Vouch("trace summarize off.jsonl");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "off.jsonl:3: \"s\" 1000 (less the offset -9223372036854775000) is "
                  "beyond +-2^62 ns"))
      << r.out;
}

TEST_F(ForgeNumbersCli, TracerTimesPastTwoToTheSixtyTwoFailTheLeg) {
  // The leg writes the trace the tracer would; "tracer" is any ELF file (vouch itself).
  Script(
      "leg.sh",
      "sleep 0.7\nout=$(echo \"$VOUCH_GPU_TRACE\" | sed \"s/%p/$$/\")\n"
      "cat > \"$out\" <<'EOF'\n" +
          CuptiTrace("{\"t\":\"k\",\"s\":-4611686018427387000,\"e\":4611686018427387000,\"dev\":0,"
                     "\"str\":7,\"corr\":2,\"n\":0}\n") +
          "EOF\n");
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r --gpu-trace-lib {} -- ./leg.sh",
                             kFast, VOUCH_BINARY));
  EXPECT_EQ(r.rc, 1) << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["legs"][0]["valid"], false) << rec["legs"][0].dump(2);
  // Refused by the leg path as `trace summarize` refuses it: no negative gpu.active_ns.
  EXPECT_TRUE(Has(Reasons("r", 0), "gpu trace: r/legs/001-run-measured/gpu-trace."))
      << Reasons("r", 0);
  EXPECT_TRUE(Has(Reasons("r", 0), "add up to 2^62 ns (146 years) or more")) << Reasons("r", 0);
  EXPECT_TRUE(LegMetric("r", 0, "gpu.active_ns").is_null()) << rec["legs"][0]["metrics"].dump();
}

TEST_F(ForgeNumbersCli, RegionMarkersOutsideTheLegAreRefusedWithTheLegNamed) {
  Script("far.sh",
         "sleep 0.7\necho \"{\\\"event\\\":\\\"begin\\\",\\\"unix_s\\\":$(date +%s.%N)}\" >> "
         "\"$VOUCH_METRICS\"\necho '{\"event\":\"end\",\"unix_s\":1e300}' >> \"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"tok_s\",\"value\":5}' >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./far.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(Json("r/record.json")["legs"][0]["valid"], false);
  EXPECT_TRUE(Has(Reasons("r", 0), "metrics.jsonl:2: \\\"unix_s\\\": 1e+300 s is beyond +-2^62 ns"))
      << Reasons("r", 0);
  // In range but years before the leg began: not this leg's region.
  Script("early.sh",
         "sleep 0.7\necho '{\"event\":\"begin\",\"unix_s\":1000000000}' >> \"$VOUCH_METRICS\"\n"
         "echo \"{\\\"event\\\":\\\"end\\\",\\\"unix_s\\\":$(date +%s.%N)}\" >> "
         "\"$VOUCH_METRICS\"\n");
  r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out s -- ./early.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(Json("s/record.json")["legs"][0]["valid"], false);
  EXPECT_TRUE(Has(Reasons("s", 0),
                  "metrics channel: leg 1 (run measured): s/legs/001-run-measured/metrics.jsonl"
                  ":1: the \\\"begin\\\" marker at unix_s 1000000000.000000 is outside the "
                  "leg's own time span"))
      << Reasons("s", 0);
}

TEST_F(ForgeNumbersCli, GoogleBenchmarkRepetitionsInMixedUnitsArePooledInOneUnit) {
  Script("leg.sh",
         "sleep 0.7\ncat > out.json <<'EOF'\n"
         "{\"context\": {}, \"benchmarks\": [\n"
         "{\"name\": \"BM_X\", \"run_type\": \"iteration\", \"repetitions\": 2, "
         "\"repetition_index\": 0, \"iterations\": 10, \"real_time\": 5000, \"cpu_time\": 4000, "
         "\"time_unit\": \"us\"},\n"
         "{\"name\": \"BM_X\", \"run_type\": \"iteration\", \"repetitions\": 2, "
         "\"repetition_index\": 1, \"iterations\": 10, \"real_time\": 5, \"cpu_time\": 4, "
         "\"time_unit\": \"ms\"}\n]}\nEOF\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric gbench:out.json -- ./leg.sh", kFast));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto m = LegMetric("r", 0, "BM_X.real_time");
  EXPECT_EQ(m["unit"], "us") << m.dump();
  EXPECT_DOUBLE_EQ(m["value"].get<double>(), 5000) << m.dump();  // not (5000 + 5) / 2
  Script("leg2.sh",
         "sleep 0.7\ncat > out.json <<'EOF'\n"
         "{\"benchmarks\": [\n"
         "{\"name\": \"BM_X\", \"real_time\": 5, \"time_unit\": \"us\"},\n"
         "{\"name\": \"BM_X\", \"real_time\": 5, \"time_unit\": \"fortnights\"}\n]}\nEOF\n");
  r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out s --metric gbench:out.json -- ./leg2.sh",
                        kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(Reasons("s", 0),
                  "benchmark 'BM_X' real_time: time_unit 'fortnights' where an earlier "
                  "repetition has 'us'; the two cannot be pooled"))
      << Reasons("s", 0);
}

TEST_F(ForgeNumbersCli, ATimeoutIsFiniteNotNegativeAndNotTooSmall) {
  Script("leg.sh", "sleep 0.7\n");
  for (const std::string bad : {"1e-10", "-1", "nan", "inf", "1e300", "5s"}) {
    SCOPED_TRACE(bad);
    auto r = Vouch(
        fmt::format("run {} --warmup 0 --reps 1 --out r --timeout {} -- ./leg.sh", kFast, bad));
    EXPECT_EQ(r.rc, 64) << r.out;
    EXPECT_TRUE(Has(r.out, "--timeout")) << r.out;
    EXPECT_TRUE(
        Has(r.out, fmt::format("'{}' is not a number of seconds: give 0 (never) or 0.01", bad)))
        << r.out;
    EXPECT_FALSE(fs::exists(D("r"))) << "a leg ran";
  }
  auto lock = Vouch(fmt::format("run {} --reps 1 --out r --lock-timeout -5 -- ./leg.sh", kFast));
  EXPECT_EQ(lock.rc, 64) << lock.out;
  EXPECT_TRUE(Has(lock.out, "'-5' is not a number of seconds")) << lock.out;
}

}  // namespace
}  // namespace vouch
