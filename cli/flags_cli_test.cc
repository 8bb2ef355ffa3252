// Issue 36, class 6: flags taken as given, through the real binary. Every numeric flag goes
// through one checked conversion with its range (exit 64 naming the flag, before any leg); a
// flag `ab --from` cannot honour is refused; a baseline file is claimed like the run folder.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

class FlagsCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 60) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
};

TEST_F(FlagsCli, ANumericFlagOutOfItsRangeIsAUsageErrorNamingIt) {
  Script("leg.sh", "sleep 0.8\n");
  const struct {
    std::string command, flag, why;
  } cases[] = {
      {"run", "--max-spread-pct=nan", "'nan' is not a number from 0 to 100"},
      {"run", "--min-busy-pct=-1", "'-1' is not a number from 0 to 100"},
      {"run", "--output-cap-mib=-1", "'-1' is not a number above 0 and up to 1073741824"},
      {"run", "--disk-budget-gib=inf", "'inf' is not a number from 0 to 1048576"},
      {"run", "--interval-ms=nan", "'nan' is not a number from 1 to 1000"},
      {"run", "--reps=2.5", "'2.5' is not a whole number from 1 to 100000"},
      {"baseline", "--headline-fail-pct=-3", "'-3' is not a number from 0 to 1000000"},
      {"ab", "--confidence=2", "'2' is not a number above 0 and below 1"},
      {"ab", "--band=nan", "'nan' is not a number above 0 and up to 100"},
  };
  for (const auto& c : cases) {
    const std::string tail =
        c.command == "ab" ? "--a-env X=1 --b-env X=2 -- ./leg.sh" : "-- ./leg.sh";
    auto r = Vouch(fmt::format("{} {} {} --out r {}", c.command, kFast, c.flag, tail));
    EXPECT_EQ(r.rc, 64) << c.flag << "\n" << r.out;
    const std::string name = c.flag.substr(0, c.flag.find('='));
    EXPECT_TRUE(Has(r.out, fmt::format("{}: the value {}", name, c.why))) << c.flag << "\n"
                                                                          << r.out;
    EXPECT_FALSE(fs::exists(D("r"))) << c.flag << ": a leg ran";
  }
  auto doctor = testing_util::Shell(
      fmt::format("VOUCH_SIM={} {} doctor --disk-budget-gib=-1", kBusy, VOUCH_BINARY));
  EXPECT_EQ(doctor.rc, 64) << doctor.out;
  EXPECT_TRUE(Has(doctor.out, "--disk-budget-gib: the value '-1' is not a number")) << doctor.out;
}

// `ab --from RECORD` recomputes the verdict with the record's plan: --band and --confidence
// were silently dropped. Refused, naming the flag, before the record is read.
// A seed is any 64-bit number (vouch draws them so, and a fleet hands them to its nodes): the
// largest is taken, a negative or a larger one is a usage error naming it.
TEST_F(FlagsCli, ASeedIsAnySixtyFourBitNumberAndNothingElse) {
  for (const char* bad : {"-5", "18446744073709551616", "1e3", "nan"}) {
    auto r = Vouch(fmt::format("ab --seed {} --a true --b false", bad));
    EXPECT_EQ(r.rc, 64) << bad << "\n" << r.out;
    EXPECT_TRUE(testing_util::Has(r.out, "is not a seed")) << r.out;
  }
  auto max = Vouch("ab --seed 18446744073709551615 --pairs 4 --a true --b false");
  EXPECT_FALSE(testing_util::Has(max.out, "is not a seed")) << max.out;
}

TEST_F(FlagsCli, AbFromRefusesAFlagItCannotHonour) {
  for (const char* flag : {"--band 50", "--confidence 0.5", "--pairs 6", "--max-spread-pct 3"}) {
    auto r = Vouch(fmt::format("ab --from nowhere {}", flag));
    EXPECT_EQ(r.rc, 64) << flag << "\n" << r.out;
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    EXPECT_TRUE(Has(r.out, fmt::format("vouch ab: {} cannot apply to --from RECORD: the verdict "
                                       "is recomputed with the record's own plan",
                                       name)))
        << r.out;
  }
  // What it does honour still reaches the record (which does not exist here).
  auto ok = Vouch("ab --from nowhere --headline x --json");
  EXPECT_EQ(ok.rc, 1) << ok.out;
  EXPECT_FALSE(Has(ok.out, "cannot apply to --from")) << ok.out;
}

// Two `vouch baseline` runs given one file both said "written", the second replacing the
// first's trials. The file is claimed before any leg: the second is refused while the first
// runs, and the first's baseline stands.
TEST_F(FlagsCli, TwoBaselinesOnOneFileTheSecondIsRefused) {
  Script("leg.sh",
         "sleep 1.5\necho '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\","
         "\"better\":\"higher\"}' >> \"$VOUCH_METRICS\"\n");
  // The first in the background (its output away from the pipe Shell reads, which would wait
  // for it); the second once the first holds the file.
  testing_util::Shell(fmt::format(
      "cd {} && (VOUCH_LOCK_FILE={}/lock1 VOUCH_SIM={} timeout 60 {} baseline {} --trials 2 "
      "--baseline base.json -- ./leg.sh > first.out 2>&1; echo $? > first.rc) > /dev/null 2>&1 &",
      D(), D(), kBusy, VOUCH_BINARY, kFast));
  for (int i = 0; i < 100 && !fs::exists(D("base.json")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(D("base.json"))) << "the first baseline never claimed its file";
  auto second = testing_util::Shell(fmt::format(
      "cd {} && VOUCH_LOCK_FILE={}/lock2 VOUCH_SIM={} timeout 60 {} baseline {} --trials 2 "
      "--baseline base.json --overwrite -- ./leg.sh",
      D(), D(), kBusy, VOUCH_BINARY, kFast));
  EXPECT_EQ(second.rc, 1) << second.out;
  EXPECT_TRUE(Has(second.out,
                  "vouch baseline: base.json is claimed by another vouch command "
                  "that is still running"))
      << second.out;
  EXPECT_FALSE(Has(second.out, "baseline written")) << second.out;
  for (int i = 0; i < 400 && !fs::exists(D("first.rc")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ifstream rc(D("first.rc"));
  int first_rc = -1;
  rc >> first_rc;
  std::ifstream out(D("first.out"));
  const std::string first_out(std::istreambuf_iterator<char>(out), {});
  EXPECT_EQ(first_rc, 0) << first_out;
  EXPECT_TRUE(Has(first_out, "baseline written to base.json")) << first_out;
  EXPECT_EQ(Json("base.json")["trials"], 2);
  // A baseline that gives nothing leaves no empty claim behind.
  Script("bad.sh", "exit 3\n");
  auto bad = Vouch(fmt::format("baseline {} --trials 1 --baseline bad.json -- ./bad.sh", kFast));
  EXPECT_NE(bad.rc, 0) << bad.out;
  EXPECT_FALSE(fs::exists(D("bad.json"))) << bad.out;
}

// An unknown flag is said before a missing required one (CLI11 checks those first).
TEST_F(FlagsCli, AnUnknownFlagIsSaidBeforeAMissingRequiredOne) {
  auto r = Vouch("gate --bogus -- true");
  EXPECT_EQ(r.rc, 64) << r.out;
  const auto unknown = r.out.find("unexpected argument: --bogus");
  EXPECT_NE(unknown, std::string::npos) << r.out;
  EXPECT_LT(unknown, r.out.find("--baseline is required")) << r.out;
}

}  // namespace
}  // namespace vouch
