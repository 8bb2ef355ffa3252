// Drives the real vouch binary: exit codes, messages and the evidence it leaves.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "lock/lock.h"
#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
constexpr const char* kScenario = VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl";

using testing_util::Has;
using Run = testing_util::ShellResult;

// Each test has its own lock file: ctest runs tests in parallel, and a shared lock would
// make one test's measurement another's "lock held".
std::string TestLockPath() {
  return (fs::temp_directory_path() /
          ("vouch_cli_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".lock"))
      .string();
}

Run Vouch(const std::string& args, const std::string& env = "") {
  return testing_util::Shell(
      fmt::format("{} VOUCH_LOCK_FILE={} {} {}", env, TestLockPath(), VOUCH_BINARY, args));
}

std::string TempDir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("vouch_cli_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

TEST(Cli, HelpListsCommandsAndTyposGetASuggestion) {
  auto h = Vouch("help");
  EXPECT_EQ(h.rc, 0);
  EXPECT_TRUE(Has(h.out, "clock sample"));
  EXPECT_TRUE(Has(h.out, "doctor"));
  auto c = Vouch("help clock sample");
  EXPECT_EQ(c.rc, 0);
  EXPECT_TRUE(Has(c.out, "--lock-clocks"));
  auto late = Vouch("doctor --sim x.jsonl");
  EXPECT_EQ(late.rc, 64);
  EXPECT_TRUE(Has(late.out,
                  "--sim and --lock-file are global options: put them before the "
                  "command (vouch --sim FILE doctor ...)"))
      << late.out;
  auto t = Vouch("doctr");
  EXPECT_EQ(t.rc, 64);
  EXPECT_TRUE(Has(t.out, "did you mean 'doctor'")) << t.out;
  auto g = Vouch("clock");
  EXPECT_EQ(g.rc, 64);
  EXPECT_TRUE(Has(g.out, "needs a subcommand")) << g.out;
  auto bad = Vouch(fmt::format("clock replay {} --frm 3", kScenario));
  EXPECT_EQ(bad.rc, 64);
  EXPECT_TRUE(Has(bad.out, "--frm")) << bad.out;
}

TEST(Cli, ReplayJudgesTheFixtureSegments) {
  auto copy =
      Vouch(fmt::format("clock replay {} --from 1795946971.36 --to 1795946983.28", kScenario));
  EXPECT_EQ(copy.rc, 0) << copy.out;
  EXPECT_TRUE(Has(copy.out, "verdict: valid"));
  auto mm =
      Vouch(fmt::format("clock replay {} --from 1795946955.64 --to 1795946969.35", kScenario));
  EXPECT_EQ(mm.rc, 3) << mm.out;
  EXPECT_TRUE(Has(mm.out, "SM clock spread"));
  auto idle =
      Vouch(fmt::format("clock replay {} --from 1795946969.4 --to 1795946970.75", kScenario));
  EXPECT_EQ(idle.rc, 2) << idle.out;
  auto none = Vouch(fmt::format("clock replay {} --from 1 --to 2", kScenario));
  EXPECT_EQ(none.rc, 1);
  EXPECT_TRUE(Has(none.out, "no sample between"));
}

TEST(Cli, ReplayOfBrokenStreamsNamesTheFile) {
  auto dir = TempDir("broken");
  std::ofstream(dir + "/trunc.jsonl") << "{\"t_s\":0,\"sm_mhz\":1980}\n{\"t_s\":0.01,\"sm";
  std::ofstream(dir + "/empty.jsonl");
  auto t = Vouch("clock replay " + dir + "/trunc.jsonl");
  EXPECT_EQ(t.rc, 1);
  EXPECT_TRUE(Has(t.out, "trunc.jsonl:2")) << t.out;
  EXPECT_TRUE(Has(t.out, "truncated")) << t.out;
  auto e = Vouch("clock replay " + dir + "/empty.jsonl");
  EXPECT_EQ(e.rc, 1);
  EXPECT_TRUE(Has(e.out, "no samples"));
  auto m = Vouch("clock replay " + dir + "/missing.jsonl");
  EXPECT_EQ(m.rc, 1);
  EXPECT_TRUE(Has(m.out, "missing.jsonl"));
}

// The simulated device starts this far into the fixture: the copy loop (flat 1980 MHz).
const std::string kCopy = fmt::format("VOUCH_SIM={} VOUCH_SIM_START=23.3", kScenario);

TEST(Cli, SampleValidWindowThenCheckAndPair) {
  auto dir = TempDir("valid");
  auto r = Vouch(fmt::format("clock sample --quiet --out {}/w -- sleep 3.6", dir), kCopy);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "SIMULATED DEVICE"));
  ASSERT_TRUE(fs::exists(dir + "/w/window.json"));
  ASSERT_TRUE(fs::exists(dir + "/w/samples.jsonl"));
  auto check = Vouch(fmt::format("clock check {}/w/window.json", dir));
  EXPECT_EQ(check.rc, 0) << check.out;
  // Stricter policy from the command line refuses the same window.
  auto strict = Vouch(fmt::format("clock check {}/w/window.json --min-busy-readings 1000", dir));
  EXPECT_EQ(strict.rc, 3) << strict.out;
  EXPECT_TRUE(Has(strict.out, "needs at least 1000"));
  auto pair = Vouch(fmt::format("clock pair {0}/w/window.json {0}/w/window.json", dir));
  EXPECT_EQ(pair.rc, 0) << pair.out;
  // The same window "from another boot": refused, then waived with a caveat.
  std::ifstream in(dir + "/w/window.json");
  auto j = nlohmann::json::parse(in);
  j["host"]["boot_id"] = "another-boot";
  std::ofstream(dir + "/other.json") << j.dump();
  auto cross = Vouch(fmt::format("clock pair {0}/w/window.json {0}/other.json", dir));
  EXPECT_EQ(cross.rc, 3) << cross.out;
  EXPECT_TRUE(Has(cross.out, "FAIL   boot id")) << cross.out;
  auto md = Vouch(fmt::format("clock pair {0}/w/window.json {0}/other.json --markdown -", dir));
  EXPECT_EQ(md.rc, 3) << md.out;  // the same exit status as the text
  EXPECT_TRUE(Has(md.out, "| rule | verdict | A | B |\n|---|---|---|---|\n")) << md.out;
  EXPECT_TRUE(Has(md.out, "| boot id | **FAIL** | ")) << md.out;
  EXPECT_TRUE(Has(md.out, "**pair: REFUSED**")) << md.out;
  // A --markdown FILE that cannot be written is named as asked, with exit 1.
  auto nowhere = Vouch(fmt::format(
      "clock pair {0}/w/window.json {0}/other.json --markdown {0}/no/such/dir/pair.md", dir));
  EXPECT_EQ(nowhere.rc, 1) << nowhere.out;
  EXPECT_TRUE(Has(nowhere.out, fmt::format("vouch clock pair: cannot write {}/no/such/dir/pair.md: "
                                           "No such file or directory",
                                           dir)))
      << nowhere.out;
  auto waived =
      Vouch(fmt::format("clock pair {0}/w/window.json {0}/other.json --allow-cross-boot", dir));
  EXPECT_EQ(waived.rc, 0) << waived.out;
  EXPECT_TRUE(Has(waived.out, "caveat: cross-boot"));
}

TEST(Cli, SampleIdleWindowKeepsEvidenceWithoutSummary) {
  auto dir = TempDir("idle");
  auto r = Vouch(fmt::format("clock sample --quiet --out {}/w -- sleep 1", dir),
                 fmt::format("VOUCH_SIM={} VOUCH_SIM_START=0", kScenario));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(fs::exists(dir + "/w/samples.jsonl"));
  EXPECT_TRUE(fs::exists(dir + "/w/window-idle.json"));
  EXPECT_FALSE(fs::exists(dir + "/w/window.json"));
  EXPECT_EQ(Vouch(fmt::format("clock check {}/w/window-idle.json", dir)).rc, 2);
}

TEST(Cli, SampleInvalidWindowOnThePowerCappedLoop) {
  auto dir = TempDir("invalid");
  auto r = Vouch(fmt::format("clock sample --quiet --out {}/w -- sleep 3.5", dir),
                 fmt::format("VOUCH_SIM={} VOUCH_SIM_START=10.5", kScenario));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "SM clock spread"));
  EXPECT_TRUE(fs::exists(dir + "/w/window.json"));
}

TEST(Cli, FailingCommandsAreReportedAndKeepTheirEvidence) {
  auto dir = TempDir("fail");
  auto crash =
      Vouch(fmt::format("clock sample --quiet --out {}/c -- sh -c 'kill -SEGV $$'", dir), kCopy);
  EXPECT_EQ(crash.rc, 4) << crash.out;
  EXPECT_TRUE(Has(crash.out, "SIGSEGV")) << crash.out;
  EXPECT_TRUE(fs::exists(dir + "/c/samples.jsonl"));
  auto status = Vouch(fmt::format("clock sample --quiet --out {}/s -- sh -c 'exit 7'", dir), kCopy);
  EXPECT_EQ(status.rc, 4) << status.out;
  EXPECT_TRUE(Has(status.out, "status 7")) << status.out;
  auto hang =
      Vouch(fmt::format("clock sample --quiet --timeout 0.5 --out {}/t -- sleep 30", dir), kCopy);
  EXPECT_EQ(hang.rc, 4) << hang.out;
  EXPECT_TRUE(Has(hang.out, "timed out")) << hang.out;
  auto missing =
      Vouch(fmt::format("clock sample --quiet --out {}/m -- no-such-program-xyz", dir), kCopy);
  EXPECT_EQ(missing.rc, 1) << missing.out;
  EXPECT_TRUE(Has(missing.out, "no-such-program-xyz")) << missing.out;
  auto nocmd = Vouch("clock sample", kCopy);
  EXPECT_EQ(nocmd.rc, 64);
  auto gpu = Vouch("clock sample --gpu 5 -- true", kCopy);
  EXPECT_EQ(gpu.rc, 64);
  EXPECT_TRUE(Has(gpu.out, "--gpu 5")) << gpu.out;
}

TEST(Cli, LockHeldByAnotherIsNamedAndWaitingTimesOut) {
  auto path = TestLockPath();
  auto held = MeasureLock::Acquire(path, "someone-elses-benchmark", 0);
  ASSERT_TRUE(held.ok());
  auto st = Vouch("lock status");
  EXPECT_EQ(st.rc, 0);
  EXPECT_TRUE(Has(st.out, "HELD")) << st.out;
  EXPECT_TRUE(Has(st.out, "someone-elses-benchmark"));
  auto r = Vouch("clock sample --quiet --lock-timeout 0.3 -- true", kCopy);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "someone-elses-benchmark")) << r.out;
  auto doc = Vouch("doctor", kCopy);
  EXPECT_EQ(doc.rc, 1);
  EXPECT_TRUE(Has(doc.out, "NOT FIT: the measurement lock")) << doc.out;
}

TEST(Cli, DoctorRefusesABusyGpuAndSaysSimulated) {
  auto dir = TempDir("doctor");
  fs::copy_file(kScenario, dir + "/s.jsonl");
  std::ofstream(dir + "/s.jsonl.static.json")
      << R"({"processes":{"0":[{"pid":999999,"name":"python3","used_bytes":1073741824}]}})";
  auto r = Vouch("doctor", "VOUCH_SIM=" + dir + "/s.jsonl");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "SIMULATED DEVICE"));
  EXPECT_TRUE(Has(r.out, "GPU 0 is busy: compute process 999999 (python3)")) << r.out;
  auto ok = Vouch("doctor --json", fmt::format("VOUCH_SIM={}", kScenario));
  EXPECT_EQ(ok.rc, 0) << ok.out;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["fit"], true);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["gpus"][0]["static"]["max_sm_mhz"], 1980);
}

TEST(Cli, ClockLockingIsResetAndARefusalFallsBack) {
  auto dir = TempDir("lockclk");
  auto r = Vouch(
      fmt::format("clock sample --quiet --lock-clocks 1500 --out {}/w -- sleep 3.6", dir), kCopy);
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(dir + "/w/window.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["gpus"][0]["fold"]["sm_mhz"]["median"], 1500);
  EXPECT_TRUE(Has(j["caveats"].dump(), "locked at 1500 MHz"));
  fs::copy_file(kScenario, dir + "/s.jsonl");
  std::ofstream(dir + "/s.jsonl.static.json")
      << R"({"lock_clocks":"no_permission","start_s":23.3})";
  auto refused =
      Vouch(fmt::format("clock sample --quiet --lock-clocks 1500 --out {}/r -- sleep 3.6", dir),
            "VOUCH_SIM=" + dir + "/s.jsonl");
  EXPECT_EQ(refused.rc, 0) << refused.out;
  EXPECT_TRUE(Has(refused.out, "fell back to sampling")) << refused.out;
  auto required = Vouch(
      fmt::format(
          "clock sample --quiet --lock-clocks 1500 --require-lock-clocks --out {}/q -- true", dir),
      "VOUCH_SIM=" + dir + "/s.jsonl");
  EXPECT_EQ(required.rc, 1) << required.out;
  EXPECT_TRUE(Has(required.out, "Insufficient Permissions"));
}

}  // namespace
}  // namespace vouch
