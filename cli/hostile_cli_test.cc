// Hostile inputs through the real binary (issue 12): every one gives a clear error naming the
// file and the field, a non-zero exit, and never an abort, a hang or a silently wrong number.
// Commands that could hang run under `timeout`, whose exit status 124 fails the test.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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
const std::string kGoodBaseline = VOUCH_SOURCE_DIR "/tests/data/gate/good.json";
constexpr const char* kFast = "--min-busy-readings 5";
constexpr int kAbort = 134;  // 128 + SIGABRT, what an uncaught exception gives

class HostileCli : public testing_util::ScratchDirTest {
 protected:
  // A real record, made once for the suite and copied into each test that mutates it.
  static void SetUpTestSuite() {
    // Per process: ctest runs each test in its own process, several at once.
    base_ =
        (fs::temp_directory_path() / fmt::format("vouch_HostileCli_base_{}", ::getpid())).string();
    fs::remove_all(base_);
    fs::create_directories(base_);
    std::ofstream(base_ + "/leg.sh")
        << "#!/bin/sh\nsleep 0.8\necho '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\","
           "\"better\":\"higher\"}' >> \"$VOUCH_METRICS\"\n";
    fs::permissions(base_ + "/leg.sh", fs::perms::owner_all);
    auto r =
        testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} timeout 60 "
                                        "{} run {} --warmup 0 --reps 2 --out r -- "
                                        "./leg.sh",
                                        base_, base_, kBusy, VOUCH_BINARY, kFast));
    if (r.rc != 0) setup_error_ = "the base run failed: " + r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(base_); }
  void SetUp() override {
    ScratchDirTest::SetUp();
    if (!setup_error_.empty()) FAIL() << setup_error_;  // a failed suite set-up is no skip
  }
  // TIMEOUT bounds a hang; the ASan+UBSan Debug build on a loaded 2-core machine is slow.
  Res Vouch(const std::string& args, int timeout_s = 20) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  json BaseRecord() const {
    std::ifstream in(base_ + "/r/record.json");
    return json::parse(in);
  }
  json BaseWindow() const {
    std::ifstream in(base_ + "/r/legs/001-run-measured/window.json");
    return json::parse(in);
  }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(D(rel), std::ios::binary) << text;
  }
  void WriteJson(const std::string& rel, const json& j) const { Write(rel, j.dump(2)); }
  // Exit 1 with the text, no abort and no timeout.
  static void ExpectRefused(const Res& r, const std::string& says) {
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.rc, kAbort) << r.out;
    EXPECT_TRUE(Has(r.out, says)) << "wanted: " << says << "\ngot: " << r.out;
  }
  static std::string base_, setup_error_;
};
std::string HostileCli::base_, HostileCli::setup_error_;

TEST_F(HostileCli, WrongTypedRecordFieldsAreRefusedByNameInShowAndGate) {
  struct Case {
    const char* pointer;
    json value;
    const char* says;
  } cases[] = {
      {"/legs/0/index", "first", "record.json: 'legs[0].index' must be an integer"},
      {"/legs/0/window/gpus/0/fold/sm_mhz/median", "fast",
       "'legs[0].window.gpus[0].fold.sm_mhz.median' must be a finite number"},
      {"/legs/0/window/gpus/0/fold/gpu", 1e300, "'legs[0].window.gpus[0].fold.gpu' must be"},
      {"/environment/simulated", "yes", "'environment.simulated' must be true or false"},
      {"/summary/run/0/n", -3, "'summary.run[0].n' must be an integer in [0, 1000000000]"},
      {"/legs/1/result/wall_ns", json::array(), "'legs[1].result.wall_ns' must be an integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json rec = BaseRecord();
    rec[json::json_pointer(c.pointer)] = c.value;
    WriteJson("record.json", rec);
    ExpectRefused(Vouch("show record.json"), c.says);
    ExpectRefused(Vouch("gate --baseline " + kGoodBaseline + " record.json"), c.says);
  }
}

TEST_F(HostileCli, NestingDeepRecordIsRefusedNotAStackOverflow) {
  Write("record.json", "{\"schema\":\"vouch.record\",\"x\":" + std::string(100000, '[') +
                           std::string(100000, ']') + "}");
  ExpectRefused(Vouch("show record.json"), "record.json: nested deeper than 128 levels");
  ExpectRefused(Vouch("clock check record.json"), "record.json: nested deeper than 128 levels");
}

TEST_F(HostileCli, ABaselineNumberThatOverflowsADoubleIsAnError) {
  std::ifstream in(kGoodBaseline);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("100.0"), 5, "1E601");
  Write("baseline.json", text);
  WriteJson("record.json", BaseRecord());
  ExpectRefused(Vouch("gate --baseline baseline.json record.json"), "baseline.json");
  ExpectRefused(Vouch("gate --baseline baseline.json record.json"), "1E601");
}

TEST_F(HostileCli, WindowValuesPast32BitsAreRefusedNotCut) {
  json w = BaseWindow();
  w["gpus"][0]["fold"]["readings"] = 4294967296ull + 50;
  WriteJson("w.json", w);
  ExpectRefused(Vouch("clock check w.json"),
                "w.json: 'gpus[0].fold.readings' must be an integer in [0, 1000000000]");
  ExpectRefused(Vouch("clock pair w.json w.json"), "'gpus[0].fold.readings' must be");
  w = BaseWindow();
  w["gpus"][0]["static"]["max_sm_mhz"] = "1980";
  WriteJson("w.json", w);
  ExpectRefused(Vouch("clock pair w.json w.json"), "'gpus[0].static.max_sm_mhz' must be");
  // A sample's SM clock of 2^32 + 1980 MHz must not replay as 1980.
  std::ifstream in(kBusy);
  std::string line, text;
  int n = 0;
  while (std::getline(in, line)) {
    if (n++ == 3) line.replace(line.find("\"sm_mhz\":1980"), 13, "\"sm_mhz\":4294969276");
    text += line + "\n";
  }
  Write("s.jsonl", text);
  ExpectRefused(Vouch("clock replay s.jsonl"), "s.jsonl:4: 'sm_mhz' must be an integer in [0,");
}

TEST_F(HostileCli, GateRecomputesTheSummaryFromTheLegs) {
  json rec = BaseRecord();
  json empty = rec;
  empty["legs"] = json::array();
  WriteJson("record.json", empty);
  ExpectRefused(Vouch("gate --baseline " + kGoodBaseline + " record.json"),
                "'valid_legs' says 2 but 0 measured legs are valid");
  json dup = rec;
  dup["summary"]["run"].push_back(dup["summary"]["run"][0]);
  dup["summary"]["run"].back()["median"] = 1e6;
  WriteJson("record.json", dup);
  ExpectRefused(Vouch("gate --baseline " + kGoodBaseline + " record.json"),
                "lists 'tok_s' a second time");
  json outside = rec;
  outside["summary"]["run"][0]["median"] = 500.0;
  WriteJson("record.json", outside);
  ExpectRefused(Vouch("gate --baseline " + kGoodBaseline + " record.json"),
                "'summary.run[0]' ('tok_s': median 500, min 100, max 100, n 2) does not match its "
                "legs (median 100");
}

TEST_F(HostileCli, DevicesAndFifosAreRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(D("fifo").c_str(), 0600), 0);
  for (const std::string& what : {std::string("/dev/zero"), D("fifo")}) {
    SCOPED_TRACE(what);
    const std::string kind = what == "/dev/zero" ? "is a character device" : "is a FIFO";
    ExpectRefused(Vouch("show " + what), kind);
    ExpectRefused(Vouch("clock check " + what), kind);
    ExpectRefused(Vouch("clock pair " + what + " " + what), kind);
    ExpectRefused(Vouch("clock replay " + what), kind);
    ExpectRefused(Vouch("ncu " + what), kind);
    ExpectRefused(Vouch("gate --baseline " + what + " " + what), kind);
  }
  // A trace may be a pipe; a FIFO without a writer reads as ended at once, and says so.
  auto t = Vouch("trace summarize /dev/zero");
  ExpectRefused(t, "/dev/zero: is a character device");
  t = Vouch("trace summarize fifo");
  EXPECT_EQ(t.rc, 1) << t.out;
  EXPECT_NE(t.out.find("fifo: the pipe gave no bytes (its writer wrote nothing, or no writer had "
                       "opened this FIFO)"),
            std::string::npos)
      << t.out;
}

TEST_F(HostileCli, ATraceFromAPipeIsRead) {
  auto r =
      testing_util::Shell(fmt::format("bash -c 'timeout 20 {} trace summarize <(cat {}) --json'",
                                      VOUCH_BINARY, VOUCH_FIXTURES_DIR "/kineto_lm_small.json.gz"));
  ASSERT_EQ(r.rc, 0) << r.out.substr(0, 2000);
  auto j = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["totals"]["kernel_count"], 2209) << r.out.substr(0, 500);
}

TEST_F(HostileCli, InvalidUtf8InArgvAndKernelNamesIsWrittenNotAborted) {
  Script("leg.sh", "sleep 0.8\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --json -- ./leg.sh $(printf 'caf\\351')", kFast));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["recipe"]["arms"][0]["argv"][1], "caf\xEF\xBF\xBD");
  EXPECT_EQ(rec["recipe"]["arms"][0]["argv_hex"][1], "636166e9");
  EXPECT_EQ(rec["legs"][0]["result"]["argv_hex"][1], "636166e9");
  EXPECT_TRUE(Has(r.out, "\"argv_hex\"")) << r.out.substr(0, 2000);

  std::ifstream in(VOUCH_FIXTURES_DIR "/ncu_raw.csv");
  std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto at = csv.find("nvjet");
  ASSERT_NE(at, std::string::npos);
  csv.replace(at, 5, "nv\xff\xfejet");
  Write("k.csv", csv);
  auto n = Vouch("ncu --json k.csv");
  ASSERT_EQ(n.rc, 0) << n.out;
  EXPECT_TRUE(Has(n.out, "nv\xEF\xBF\xBD\xEF\xBF\xBDjet")) << n.out.substr(0, 2000);
}

TEST_F(HostileCli, AMetricFileThatIsADeviceOrFifoFailsTheLegAndTheRunEnds) {
  Script("leg.sh", "sleep 0.8\n");
  fs::create_symlink("/dev/zero", D("out.json"));
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric gbench:out.json -- ./leg.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  // Refused by name either as not this leg's file or as a device; never read.
  EXPECT_TRUE(Has(r.out, "out.json: is a character device") ||
              Has(r.out, "out.json' (gbench:out.json) was not written by this leg"))
      << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["status"], "complete");
  ASSERT_EQ(rec["legs"].size(), 1u);
  EXPECT_EQ(rec["legs"][0]["valid"], false);

  ASSERT_EQ(::mkfifo(D("fifo.json").c_str(), 0600), 0);
  r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r2 --metric gbench:fifo.json -- ./leg.sh",
                        kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "fifo.json: is a FIFO") ||
              Has(r.out, "fifo.json' (gbench:fifo.json) was not written by this leg"))
      << r.out;
  // Replaced by a link to /dev/zero during the leg: the bounded opener refuses it.
  Script("leg3.sh", "sleep 0.8\nln -sf /dev/zero out3.json\n");
  r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r4 --metric gbench:out3.json -- ./leg3.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "out3.json")) << r.out;
  // The channel itself replaced by a link to /dev/zero.
  Script("leg2.sh", "sleep 0.8\nln -sf /dev/zero \"$VOUCH_METRICS\"\n");
  r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r3 -- ./leg2.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "metrics.jsonl: is a character device")) << r.out;
}

TEST_F(HostileCli, AMillionMetricLinesStopAtTheCapQuickly) {
  Script("leg.sh",
         "sleep 0.8\nawk 'BEGIN { for (i = 0; i < 200000; i++) "
         "printf \"{\\\"name\\\":\\\"m%d\\\",\\\"value\\\":1}\\n\", i }' > \"$VOUCH_METRICS\"\n");
  // Linear, so seconds in a release build; 100,001 JSON lines parsed in the sanitizer build
  // take longer, hence the wider bound.
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast), 150);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "metrics.jsonl:100001: more than 100000 metrics from one leg")) << r.out;
}

}  // namespace
}  // namespace vouch
