// The process side of a run, driven through the real binary on the simulated device: every
// terminating signal ends the leg and keeps the record, processes that escape a leg are
// found and ended, a failing leg stops the run, a metric belongs to its leg.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace vouch {
namespace {

using testing_util::Has;
using Res = testing_util::ShellResult;
const auto& Sh = testing_util::Shell;
namespace fs = std::filesystem;
// The copy loop at a flat clock; short legs use a lower busy-reading floor.
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

class LegCli : public testing_util::ScratchDirTest {
 protected:
  std::string Env() const {
    return fmt::format("VOUCH_LOCK_FILE={}/lock VOUCH_SIM={}", D(), kBusy);
  }
  Res Vouch(const std::string& args) const {
    return Sh(fmt::format("cd {} && {} {} {}", D(), Env(), VOUCH_BINARY, args));
  }
  // Starts vouch ARGS in the background, sends SIG after DELAY_S, prints "rc=N".
  Res VouchKilled(const std::string& args, const std::string& sig, double delay_s) const {
    return Sh(fmt::format("cd {} && ({} {} {} & p=$!; sleep {}; kill -{} $p; wait $p; echo rc=$?)",
                          D(), Env(), VOUCH_BINARY, args, delay_s, sig));
  }
  nlohmann::json Record(const std::string& rel) const { return Json(rel + "/record.json"); }
  int ReadPid(const std::string& rel) const {
    std::ifstream in(D(rel));
    int pid = 0;
    in >> pid;
    return pid;
  }
};

bool Alive(int pid) { return pid > 0 && ::kill(pid, 0) == 0; }

TEST_F(LegCli, EveryTerminatingSignalEndsTheLegAndKeepsTheRecord) {
  Script("leg.sh", "echo $$ > \"$1\"\nsleep 30\n");
  for (auto [sig, code] : {std::pair<const char*, int>{"HUP", 129}, {"QUIT", 131}, {"TERM", 143}}) {
    const std::string out = std::string("r") + sig;
    auto r = VouchKilled(
        fmt::format("run {} --warmup 0 --reps 3 --out {} -- ./leg.sh {}.pid", kFast, out, out), sig,
        1.2);
    EXPECT_TRUE(Has(r.out, fmt::format("rc={}", code))) << sig << ": " << r.out;
    auto j = Record(out);
    EXPECT_EQ(j["status"], "interrupted") << sig;
    ASSERT_EQ(j["legs"].size(), 1u) << sig;
    EXPECT_EQ(j["legs"][0]["result"]["interrupted"], true) << sig;
    EXPECT_TRUE(Has(j["missing"].dump(), fmt::format("SIG{}", sig))) << j["missing"].dump();
    const int leg_pid = ReadPid(out + ".pid");
    EXPECT_FALSE(Alive(leg_pid)) << sig << ": the leg must not outlive vouch";
  }
}

TEST_F(LegCli, AProcessThatEscapesTheLegIsFoundRecordedEndedAndVoidsTheLeg) {
  // setsid leaves the group and session, env -i drops VOUCH_LEG_ID, the subshell exits at
  // once: only the re-parenting to vouch (the subreaper) ties the daemon to the leg.
  Script("leg.sh", "sleep 0.7\n( setsid env -i sleep 301 & echo $! > daemon.pid )\nsleep 0.1\n");
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  const int daemon = ReadPid("daemon.pid");
  EXPECT_FALSE(Alive(daemon)) << "the daemon must not outlive vouch";
  auto leg = Record("r")["legs"][0];
  EXPECT_EQ(leg["valid"], false);
  ASSERT_EQ(leg["result"]["leftover_processes"].size(), 1u) << leg.dump(2);
  auto p = leg["result"]["leftover_processes"][0];
  EXPECT_EQ(p["pid"], daemon);
  EXPECT_EQ(p["argv"], nlohmann::json({"sleep", "301"}));
  EXPECT_EQ(p["ended_by"], "SIGTERM");
  const std::string reason =
      fmt::format("left 1 process running after it exited: sleep 301 (pid {}); ended it", daemon);
  EXPECT_TRUE(Has(leg["reasons"].dump(), reason)) << leg["reasons"].dump();
  EXPECT_TRUE(Has(r.out, reason)) << r.out;
}

TEST_F(LegCli, ABrokenCommandStopsAtItsFirstLegUnlessKeepGoing) {
  Script("broken.sh", "echo oops >&2\nexit 3\n");
  for (const char* cmd : {"run --warmup 1 --reps 3", "baseline --trials 3 --baseline b.json",
                          "ab --pairs 4 --a-env X=0 --b-env X=1 --headline tok_s"}) {
    const std::string args = fmt::format("{} --out x -- ./broken.sh", cmd);
    fs::remove_all(D("x"));
    auto r = Vouch(args);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "stopped at leg 1 of ")) << cmd << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "the command exited with status 3")) << cmd << ": " << r.out;
    auto j = Record("x");
    EXPECT_EQ(j["legs"].size(), 1u) << cmd;
    EXPECT_EQ(j["status"], "failed") << cmd;
    EXPECT_TRUE(Has(j["missing"].dump(), "--keep-going runs them")) << j["missing"].dump();
  }
  auto all = Vouch("run --warmup 1 --reps 3 --keep-going --out all -- ./broken.sh");
  EXPECT_EQ(all.rc, 1) << all.out;
  EXPECT_EQ(Record("all")["legs"].size(), 4u);
  EXPECT_EQ(Record("all")["status"], "complete");
}

}  // namespace
}  // namespace vouch
