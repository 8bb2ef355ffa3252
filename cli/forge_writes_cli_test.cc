// Issue 21, classes 9 and 11, through the real binary: a run folder another live run holds is
// never taken, a deleted working directory is named, the leg dies with a vouch killed by
// SIGKILL, and a leg's peak RSS is its own. Each failed on 116c769.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

// Alive and not a zombie.
bool Running(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string s;
  if (!std::getline(in, s)) return false;
  const auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z' &&
         s[close + 2] != 'X';
}

class ForgeWritesCli : public testing_util::ScratchDirTest {
 protected:
  // Runs vouch in D() with lock file LOCK (relative to D()); TIMEOUT bounds a hang.
  Res Vouch(const std::string& args, const std::string& lock = "lock", int timeout_s = 60) const {
    return testing_util::Shell(
        fmt::format("cd {} && VOUCH_LOCK_FILE={}/{} VOUCH_SIM={} timeout {} {} {}", D(), D(), lock,
                    kBusy, timeout_s, VOUCH_BINARY, args));
  }
  // Starts vouch in the background; returns its pid (the shell execs it, so $! is vouch).
  int VouchInBackground(const std::string& args, const std::string& lock,
                        const std::string& log) const {
    auto r = testing_util::Shell(
        fmt::format("cd {} && (VOUCH_LOCK_FILE={}/{} VOUCH_SIM={} exec {} {}) >{} 2>&1 & echo $!",
                    D(), D(), lock, kBusy, VOUCH_BINARY, args, log));
    return std::atoi(r.out.c_str());
  }
  // Waits (a generous hang guard, not a timing) until FILE exists under D().
  bool WaitFor(const std::string& file, double seconds = 60) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream in(D(file));
      std::string s;
      if (in && std::getline(in, s) && !s.empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  static int WaitExit(int pid) {
    // Not our child (the shell's): poll until it is gone.
    for (int i = 0; i < 1200 && Running(pid); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return Running(pid) ? -1 : 0;
  }
};

// Two runs given one --out but different lock files: the second, even with --overwrite,
// must not take the folder the first is writing (on main it deleted the first's record).
TEST_F(ForgeWritesCli, ARunFolderHeldByALiveRunIsNeverTaken) {
  Script("slow.sh", "echo started > \"$VOUCH_METRICS.started\"; sleep 2\n");
  const int first =
      VouchInBackground(fmt::format("run {} --warmup 0 --reps 1 --out shared -- ./slow.sh", kFast),
                        "lock-a", "first.log");
  ASSERT_GT(first, 0);
  ASSERT_TRUE(WaitFor("shared/record.json")) << "the first run did not start";
  auto second =
      Vouch(fmt::format("run {} --warmup 0 --reps 1 --overwrite --out shared -- /bin/true", kFast),
            "lock-b");
  EXPECT_NE(second.rc, 0) << second.out;
  EXPECT_TRUE(Has(second.out, "shared")) << second.out;
  EXPECT_TRUE(Has(second.out, "held by another vouch run")) << second.out;
  ASSERT_EQ(WaitExit(first), 0) << "hang guard";
  const auto rec = Json("shared/record.json");
  ASSERT_EQ(rec["legs"].size(), 1u) << rec.dump();
  EXPECT_EQ(rec["legs"][0]["result"]["argv"][0], "./slow.sh");
  EXPECT_TRUE(fs::exists(D("shared/legs.jsonl")));
  // Once the first has ended, --overwrite replaces its finished run as before.
  auto third =
      Vouch(fmt::format("run {} --warmup 0 --reps 1 --overwrite --out shared -- /bin/true", kFast),
            "lock-b");
  EXPECT_FALSE(Has(third.out, "held by another vouch run")) << third.out;
  EXPECT_EQ(Json("shared/record.json")["legs"][0]["result"]["argv"][0], "/bin/true") << third.out;
}

// Two default folders claimed in one second by runs on different lock files: both run, each
// in its own folder (mkdir is the claim).
TEST_F(ForgeWritesCli, ConcurrentRunsOnOneOutNeverShareIt) {
  Script("leg.sh", "sleep 0.5\n");
  const int a = VouchInBackground(
      fmt::format("run {} --warmup 0 --reps 1 --out same -- ./leg.sh", kFast), "lock-a", "a.log");
  const int b = VouchInBackground(
      fmt::format("run {} --warmup 0 --reps 1 --out same -- ./leg.sh", kFast), "lock-b", "b.log");
  ASSERT_EQ(WaitExit(a), 0);
  ASSERT_EQ(WaitExit(b), 0);
  const auto rec = Json("same/record.json");
  EXPECT_EQ(rec["legs"].size(), 1u) << "exactly one run's legs: " << rec.dump();
  std::ifstream la(D("a.log")), lb(D("b.log"));
  std::stringstream logs;
  logs << la.rdbuf() << lb.rdbuf();
  // The loser was refused naming the folder (held, or holding the winner's finished run).
  EXPECT_TRUE(Has(logs.str(), "'same'")) << logs.str();
}

TEST_F(ForgeWritesCli, ADeletedWorkingDirectoryIsNamedNotACrash) {
  fs::create_directories(D("gone"));
  auto r = testing_util::Shell(
      fmt::format("cd {} && rmdir {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} timeout 60 {} run {} "
                  "--warmup 0 --reps 1 --out {} -- /bin/true",
                  D("gone"), D("gone"), D(), kBusy, VOUCH_BINARY, kFast, D("r")));
  EXPECT_EQ(r.rc, 64) << r.out;  // kExitUsage: no abort (134), no "internal error"
  EXPECT_TRUE(Has(r.out, "working directory no longer exists")) << r.out;
  EXPECT_FALSE(Has(r.out, "internal error")) << r.out;
}

// A vouch killed by SIGKILL (nothing of it runs) must not leave its leg running unsupervised.
TEST_F(ForgeWritesCli, TheLegDiesWithAVouchKilledBySigkill) {
  Script("long.sh", "echo $$ > \"$PWD/leg.pid\"\nexec sleep 30\n");
  const int vouch = VouchInBackground(
      fmt::format("run {} --warmup 0 --reps 1 --out r -- ./long.sh", kFast), "lock", "v.log");
  ASSERT_GT(vouch, 0);
  ASSERT_TRUE(WaitFor("leg.pid")) << "the leg did not start";
  const int leg = std::atoi(testing_util::Shell("cat " + D("leg.pid")).out.c_str());
  ASSERT_GT(leg, 0);
  ASSERT_TRUE(Running(leg));
  ASSERT_EQ(::kill(vouch, SIGKILL), 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // hang guard: 10 s
    gone = !Running(leg);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!gone) ::kill(leg, SIGKILL);  // leave nothing behind on failure
  EXPECT_TRUE(gone) << "leg " << leg << " outlived the vouch that ran it";
}

// Nor its leg's children (issue 36, class 7): PR_SET_PDEATHSIG reaches the leg's main process
// only, and a shell's `sleep` outlived the vouch killed by SIGKILL. The leg's process group
// dies with vouch (src/leg/guard.h).
TEST_F(ForgeWritesCli, TheLegsGrandchildDiesWithAVouchKilledBySigkill) {
  Script("tree.sh", "sleep 300 &\necho $! > \"$PWD/grandchild.pid\"\nwait\n");
  const int vouch = VouchInBackground(
      fmt::format("run {} --warmup 0 --reps 1 --out r -- ./tree.sh", kFast), "lock", "v.log");
  ASSERT_GT(vouch, 0);
  ASSERT_TRUE(WaitFor("grandchild.pid")) << "the leg did not start";
  const int grandchild = std::atoi(testing_util::Shell("cat " + D("grandchild.pid")).out.c_str());
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(Running(grandchild));
  ASSERT_EQ(::kill(vouch, SIGKILL), 0);
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {  // 5 s
    gone = !Running(grandchild);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!gone) ::kill(grandchild, SIGKILL);  // leave nothing behind on failure
  EXPECT_TRUE(gone) << "the leg's child " << grandchild << " outlived the vouch killed by SIGKILL";
}

// /bin/true read 134.7 MiB: Linux charged vouch's own memory to the exec'd child.
TEST_F(ForgeWritesCli, TinyLegPeakRssIsTiny) {
  // Its window is too short to be valid (exit 1); its record is what is read here.
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 2 --out r -- /bin/true", kFast));
  ASSERT_TRUE(fs::exists(D("r/record.json"))) << r.out;
  const auto rec = Json("r/record.json");
  ASSERT_EQ(rec["legs"].size(), 2u);
  for (const auto& leg : rec["legs"])
    EXPECT_LT(leg["result"]["peak_rss_bytes"].get<std::uint64_t>(), 6u << 20) << leg.dump();
}

}  // namespace
}  // namespace vouch
