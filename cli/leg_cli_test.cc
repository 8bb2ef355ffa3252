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
  // Starts vouch ARGS in the background, waits until the leg has written READY (at most 60 s:
  // a loaded sanitizer run can take seconds to start a leg), then DELAY_S more, sends SIG and
  // prints "rc=N". In a script's background SIGINT and SIGQUIT are ignored, and vouch keeps
  // them so: env gives them back, as for a run in a terminal's foreground.
  Res VouchKilled(const std::string& args, const std::string& sig, const std::string& ready,
                  double delay_s) const {
    return Sh(fmt::format(
        "cd {} && ({} env --default-signal=INT,QUIT {} {} & p=$!; for i in $(seq 600); do [ -s "
        "{} ] && break; sleep 0.1; done; "
        "sleep {}; kill -{} $p; wait $p; echo rc=$?)",
        D(), Env(), VOUCH_BINARY, args, ready, delay_s, sig));
  }
  nlohmann::json Record(const std::string& rel) const { return Json(rel + "/record.json"); }
  // One measured leg into OUT; REST is the metric flags, "--", the command.
  Res RunOne(const std::string& out, const std::string& rest) const {
    return Vouch(fmt::format("run {} --warmup 0 --reps 1 --out {} {}", kFast, out, rest));
  }
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
        out + ".pid", 0.3);
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

TEST_F(LegCli, AMetricFileLeftByAnEarlierLegIsNotThisLegs) {
  // The command writes out.json only when it is missing: legs 2 and 3 find leg 1's.
  Script("once.sh", "sleep 0.7\n[ -f out.json ] || echo '{\"tok_s\": 100}' > out.json\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 3 --out r --metric json@out.json:tok_s:tok/s:higher:/tok_s -- "
      "./once.sh",
      kFast));
  EXPECT_EQ(r.rc, 0) << r.out;  // leg 1's own number is valid
  auto j = Record("r");
  ASSERT_EQ(j["legs"].size(), 3u);
  EXPECT_EQ(j["legs"][0]["valid"], true) << j["legs"][0]["reasons"];
  for (int i : {1, 2}) {
    EXPECT_EQ(j["legs"][i]["valid"], false);
    EXPECT_TRUE(Has(j["legs"][i]["metrics_error"].get<std::string>(),
                    fmt::format("metric file '{}' (json@out.json:tok_s:tok/s:higher:/tok_s) was "
                                "not written by this leg",
                                D("out.json"))))
        << j["legs"][i]["metrics_error"];
  }
  EXPECT_EQ(j["summary"]["run"][0]["n"], 1);
  // A file copied in with its old time (cp -p) is older than the leg: not its number.
  std::ofstream(D("pre.json")) << R"({"tok_s": 100})";
  ASSERT_EQ(Sh(fmt::format("touch -d 2020-01-01 {}", D("pre.json"))).rc, 0);
  Script("copy.sh", "sleep 0.7\ncp -p pre.json copied.json\n");
  auto c = RunOne("c", "--metric json@copied.json:tok_s:tok/s:higher:/tok_s -- ./copy.sh");
  EXPECT_EQ(c.rc, 1) << c.out;
  EXPECT_TRUE(Has(Record("c")["legs"][0]["metrics_error"].get<std::string>(),
                  "is older than the leg (last modified 2020-01-01"))
      << Record("c")["legs"][0]["metrics_error"];
}

TEST_F(LegCli, AnOutDirectoryThatHoldsARunIsRefusedUnlessOverwrite) {
  Script("leg.sh", "sleep 0.7\necho '{\"name\":\"tok_s\",\"value\":100}' >> \"$VOUCH_METRICS\"\n");
  ASSERT_EQ(Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast)).rc, 0);
  const double first_start = Record("r")["started_unix_s"];
  auto again = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast));
  EXPECT_EQ(again.rc, 1) << again.out;
  EXPECT_TRUE(Has(again.out, "run directory 'r' already holds a run (record.json)")) << again.out;
  EXPECT_EQ(Record("r")["started_unix_s"], first_start) << "the old record must be untouched";
  // --overwrite replaces the run; the new leg's channel starts empty (no duplicate tok_s).
  auto over =
      Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r --overwrite -- ./leg.sh", kFast));
  EXPECT_EQ(over.rc, 0) << over.out;
  EXPECT_NE(Record("r")["started_unix_s"], first_start);
  EXPECT_EQ(Record("r")["summary"]["run"][0]["median"], 100.0);
  // A folder of other files is never written into, --overwrite or not.
  fs::create_directories(D("src"));
  std::ofstream(D("src/main.cc")) << "int main() {}\n";
  auto mine = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out src --overwrite -- true", kFast));
  EXPECT_EQ(mine.rc, 1) << mine.out;
  EXPECT_TRUE(Has(mine.out, "holds 'main.cc', which is not part of a vouch run")) << mine.out;
  EXPECT_TRUE(fs::exists(D("src/main.cc")));
  // Default directories never collide: two runs in the same second get two directories.
  ASSERT_EQ(Vouch(fmt::format("run {} --warmup 0 --reps 1 -- ./leg.sh", kFast)).rc, 0);
  ASSERT_EQ(Vouch(fmt::format("run {} --warmup 0 --reps 1 -- ./leg.sh", kFast)).rc, 0);
  int runs = 0;
  for (const auto& e : fs::directory_iterator(dir_))
    runs += e.path().filename().string().rfind("vouch-run-", 0) == 0;
  EXPECT_EQ(runs, 2);
}

TEST_F(LegCli, AMetricFromAStreamCutAtTheOutputCapIsNotQuotable) {
  // 2 MB of progress lines, then the final figure: a 1 MiB cap keeps only progress.
  Script("chatty.sh",
         "yes 'progress 1.5 tok/s' | head -c 2000000\necho 'final 100 tok/s'\nsleep 0.7\n");
  auto r =
      Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r --output-cap-mib 1 "
                        "--metric 'regex:tok_s:tok/s:higher:([0-9.]+) tok/s' -- ./chatty.sh",
                        kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  auto leg = Record("r")["legs"][0];
  EXPECT_EQ(leg["valid"], false);
  EXPECT_TRUE(Has(leg["metrics_error"].get<std::string>(),
                  "reads stdout, which was cut at the output cap (1048576 of 2000016 bytes kept)"))
      << leg["metrics_error"];
  EXPECT_TRUE(Record("r")["summary"]["run"].empty());
}

TEST_F(LegCli, ALockFileThatIsASymlinkIsRefusedAndItsTargetKept) {
  std::ofstream(D("victim")) << "precious\n";
  fs::create_symlink(D("victim"), D("planted.lock"));
  auto r =
      Sh(fmt::format("cd {} && VOUCH_SIM={} {} --lock-file planted.lock run {} --warmup 0 "
                     "--reps 1 --out r -- true",
                     D(), kBusy, VOUCH_BINARY, kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "refusing lock file planted.lock: it is a symbolic link")) << r.out;
  std::ifstream in(D("victim"));
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "precious\n");
  auto st = Sh(fmt::format("cd {} && {} --lock-file planted.lock lock status", D(), VOUCH_BINARY));
  EXPECT_EQ(st.rc, 1) << st.out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST_F(LegCli, SecretsInTheCommandLineAreRedactedInEveryFile) {
  Script("leg.sh", "sleep 0.8\n");
  auto r =
      RunOne("r", "-- ./leg.sh --token=tok-sekrit --password pw-sekrit --api-key=key-sekrit --n 4");
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* f : {"r/record.json", "r/legs/001-run-measured/leg.json",
                        "r/legs/001-run-measured/window.json", "lock"}) {
    const std::string text = Slurp(D(f));
    ASSERT_FALSE(text.empty()) << f;
    EXPECT_FALSE(Has(text, "sekrit")) << f << ":\n" << text;
  }
  EXPECT_FALSE(Has(r.out, "sekrit")) << r.out;
  auto j = Record("r");
  EXPECT_EQ(j["recipe"]["arms"][0]["argv"],
            nlohmann::json({"./leg.sh", "--token=<redacted>", "--password", "<redacted>",
                            "--api-key=<redacted>", "--n", "4"}));
  EXPECT_TRUE(Has(j["recipe"]["reproduce"].get<std::string>(), "--password '<redacted>'"))
      << j["recipe"]["reproduce"];
  EXPECT_EQ(j["recipe"]["reproduce_note"],
            "3 secret values were redacted as <redacted>: put them back to reproduce");
  auto st = Sh(fmt::format("cd {} && {} lock status", D(), Env() + " " + VOUCH_BINARY));
  EXPECT_FALSE(Has(st.out, "sekrit")) << st.out;
}

TEST_F(LegCli, MarkersWithoutUnixSAreTimedWhenVouchSawThem) {
  // Begin after ~0.6 s, end ~1.2 s later, no unix_s: vouch reads the channel as the leg runs.
  Script("marked.sh",
         "sleep 0.6\necho '{\"event\":\"begin\"}' >> \"$VOUCH_METRICS\"\n"
         "sleep 1.2\necho '{\"event\":\"end\"}' >> \"$VOUCH_METRICS\"\nsleep 0.6\n");
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./marked.sh", kFast));
  EXPECT_EQ(r.rc, 0) << r.out;
  auto leg = Record("r")["legs"][0];
  auto region = leg["window"]["region"];
  ASSERT_TRUE(region.is_object()) << leg["window"].dump(2);
  const double start_s = leg["result"]["start_unix_ns"].get<double>() / 1e9;
  const double end_s = leg["result"]["end_unix_ns"].get<double>() / 1e9;
  const double begin = region["begin_unix_s"], end = region["end_unix_s"];
  // Seen within a poll or two of when the lines were written (wide bounds: a loaded CI).
  EXPECT_GT(begin - start_s, 0.4);
  EXPECT_LT(end - begin, end_s - start_s - 0.3) << "the end marker is not the leg's end";
  EXPECT_GT(end - begin, 0.9);
}

}  // namespace
}  // namespace vouch
