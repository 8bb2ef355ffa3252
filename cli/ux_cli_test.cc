// A newcomer's day (issue 14) through the real binary: suggestions for mistyped flags, the
// forms the README shows, and messages that read right the first time.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
constexpr const char* kScenario = VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl";
const std::string kBoth = VOUCH_SOURCE_DIR "/tests/data/sim/h200x2_busy.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;

class UxCli : public testing_util::ScratchDirTest {
 protected:
  // ENV goes before the binary (e.g. VOUCH_SIM=...).
  Res Vouch(const std::string& args, const std::string& env = "") const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock {} {} {}", D(), D(),
                                           env, VOUCH_BINARY, args));
  }
};

TEST_F(UxCli, AMistypedFlagGetsTheNearestOption) {
  auto r = Vouch("run --repz 5 -- true");
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch run: unexpected arguments: --repz 5\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch run: unknown option '--repz', did you mean '--reps'?")) << r.out;
  auto eq = Vouch("baseline --trails=4 -- true");
  EXPECT_EQ(eq.rc, 64) << eq.out;
  EXPECT_TRUE(Has(eq.out, "unknown option '--trails', did you mean '--trials'?")) << eq.out;
  auto two = Vouch(fmt::format("clock replay {} --frm 3 --tto 4", kScenario));
  EXPECT_EQ(two.rc, 64) << two.out;
  EXPECT_TRUE(Has(two.out, "'--frm', did you mean '--from'?")) << two.out;
  EXPECT_TRUE(Has(two.out, "'--tto', did you mean '--to'?")) << two.out;
  // Nothing near: the plain message, no guess.
  auto far = Vouch("doctor --zzzzzzzz");
  EXPECT_EQ(far.rc, 64) << far.out;
  EXPECT_TRUE(Has(far.out, "--zzzzzzzz")) << far.out;
  EXPECT_FALSE(Has(far.out, "did you mean")) << far.out;
}

TEST_F(UxCli, GpuTakesACommaListAsTheReadmeShows) {
  auto sim = "VOUCH_SIM=" + kBoth;
  auto d = Vouch("doctor --gpu 0,1", sim);
  EXPECT_EQ(d.rc, 0) << d.out;
  EXPECT_TRUE(Has(d.out, "GPUs to measure on: 0,1 (--gpu 0,1)")) << d.out;
  auto one = Vouch("doctor --gpu 1", sim);
  EXPECT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(Has(one.out, "GPUs to measure on: 1 (--gpu 1)")) << one.out;
  auto s = Vouch("clock sample --min-busy-readings 5 --gpu 0,1 --quiet --out w -- sleep 1", sim);
  EXPECT_EQ(s.rc, 0) << s.out;
  EXPECT_EQ(Json("w/window.json")["gpus"].size(), 2u);
  auto rp = Vouch(fmt::format("clock replay {} --gpu 0,1 --json", kBoth));
  EXPECT_EQ(rp.rc, 0) << rp.out;
  auto bad = Vouch("doctor --gpu 0,x", sim);
  EXPECT_EQ(bad.rc, 64) << bad.out;
}

TEST_F(UxCli, AbArmsSplitByShellWordRules) {
  auto sim = std::string("VOUCH_SIM=") + kScenario;
  // A backslash escape and quotes spell the same words: one arm, refused before any leg.
  auto same = Vouch("ab --a 'echo a\\ b' --b \"echo 'a b'\"", sim);
  EXPECT_EQ(same.rc, 3) << same.out;
  EXPECT_TRUE(Has(same.out, "arms A and B are one arm")) << same.out;
  auto sub = Vouch("ab --a 'bench $(id)' --b bench", sim);
  EXPECT_EQ(sub.rc, 64) << sub.out;
  EXPECT_TRUE(Has(sub.out,
                  "vouch ab: --a: 'bench $(id)': command substitution ($(...) or backticks) is "
                  "not allowed"))
      << sub.out;
  auto op = Vouch("ab --a bench --b 'bench | tee x'", sim);
  EXPECT_EQ(op.rc, 64) << op.out;
  EXPECT_TRUE(Has(op.out, "--b: 'bench | tee x': an unquoted shell operator")) << op.out;
}

// The simulated device starts in the fixture's copy loop (flat 1980 MHz).
const std::string kCopy = fmt::format("VOUCH_SIM={} VOUCH_SIM_START=23.3", kScenario);

TEST_F(UxCli, LegsAreCountedFromOneWherePeopleReadThem) {
  // n is the leg's own number: 1 for the warm-up, then 2 and 3.
  Script("leg.sh",
         "sleep 0.5; echo x >> count; n=$(wc -l < count)\n"
         "echo \"{\\\"name\\\":\\\"n\\\",\\\"value\\\":$n}\" >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(
      "run --min-busy-readings 3 --warmup 1 --reps 2 --expect-equal n --out r -- ./leg.sh", kCopy);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "leg 1 of 3 (run warmup): discarded (warmup)")) << r.out;
  EXPECT_TRUE(Has(r.out, "leg 3 of 3 (run measured): valid")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "expectation violated: leg 3: metric 'n' expected the value of leg 2 "
                  "(2), got 3"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "    3 run    measured")) << r.out;
  auto rec = Json("r/record.json");
  ASSERT_EQ(rec["legs"].size(), 3u);
  EXPECT_EQ(rec["legs"][2]["index"], 2);  // the 0-based position in legs[]
  EXPECT_EQ(rec["legs"][2]["leg"], 3);    // the number people see
  EXPECT_EQ(rec["legs"][2]["dir"], "legs/003-run-measured");
  EXPECT_TRUE(fs::exists(D("r/legs/003-run-measured/stdout.txt")));
}

TEST_F(UxCli, RegexMetricsAreFoundOnLinesOfAnyLength) {
  // The figure sits at the end of a 64 KiB line (std::regex skipped lines over 16 KiB).
  Script("leg.sh",
         "sleep 0.5; head -c 65536 /dev/zero | tr '\\\\0' x; echo ' decode: 131.5 tok/s'\n");
  auto r = Vouch(
      "run --min-busy-readings 3 --warmup 0 --reps 1 --out r "
      "--metric 'regex:tok_s:tok/s:higher:decode: (\\d+\\.\\d+) tok/s' -- ./leg.sh",
      kCopy);
  EXPECT_EQ(r.rc, 0) << r.out;
  auto rec = Json("r/record.json");
  ASSERT_FALSE(rec["legs"][0]["metrics"].empty()) << rec["legs"][0].dump();
  bool found = false;
  for (const auto& m : rec["legs"][0]["metrics"])
    if (m["name"] == "tok_s") found = m["value"] == 131.5;
  EXPECT_TRUE(found) << rec["legs"][0]["metrics"].dump();
  auto bad = Vouch("run --metric 'regex:n::none:(?<=a)([0-9])' -- true", kCopy);
  EXPECT_EQ(bad.rc, 64) << bad.out;
  EXPECT_TRUE(Has(bad.out, "regex '(?<=a)([0-9])' is invalid")) << bad.out;
}

TEST_F(UxCli, HyperfineAndPytestBenchmarkAreReadNatively) {
  const std::string data = VOUCH_SOURCE_DIR "/tests/data/metrics/";
  // The leg "is" hyperfine: it leaves hyperfine's real export where the spec reads it.
  Script("hf.sh",
         "sleep 0.5; cp " + data + "$1 out.json; cp " + data + "pytest_benchmark.json pb.json\n");
  auto ok = Vouch(
      "run --min-busy-readings 3 --warmup 0 --reps 1 --out ok --metric hyperfine:out.json "
      "--metric pytest-benchmark:pb.json -- ./hf.sh hyperfine.json",
      kCopy);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  auto rec = Json("ok/record.json");
  const nlohmann::json* mean = nullptr;
  for (const auto& m : rec["legs"][0]["metrics"])
    if (m["name"] == "sleep 0.01.mean") mean = &m;
  ASSERT_NE(mean, nullptr) << rec["legs"][0]["metrics"].dump();
  EXPECT_EQ((*mean)["unit"], "s");
  EXPECT_EQ((*mean)["samples"].size(), 5u);
  EXPECT_TRUE(Has(ok.out, "test_bench.py::test_fib_10.ops")) << ok.out;
  // hyperfine -i let a failing command through: the leg is refused, with the command named.
  auto bad = Vouch(
      "run --min-busy-readings 3 --warmup 0 --reps 1 --out bad --metric hyperfine:out.json -- "
      "./hf.sh hyperfine_failing.json",
      kCopy);
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out,
                  "hyperfine command 'sh -c \"exit 3\"' failed in 3 of 3 runs (exit "
                  "codes 3,3,3)"))
      << bad.out;
}

TEST_F(UxCli, AHeldLockIsNamedAtOnceWithTheWait) {
  // Another job holds the lock (flock(1)); its lock file names it as vouch would.
  std::ofstream(D("lock")) << R"({"pid":4242,"command":"other-bench --x","start_unix_s":)"
                           << std::time(nullptr) - 30 << R"(,"host":"gpu-box"})"
                           << "\n";
  auto r =
      testing_util::Shell(fmt::format("cd {0} && (flock lock sleep 8 >/dev/null 2>&1 &) && sleep "
                                      "0.5 && VOUCH_LOCK_FILE={0}/lock {1} {2} run "
                                      "--lock-timeout 0.5 -- true",
                                      D(), kCopy, VOUCH_BINARY));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, fmt::format("vouch run: the measurement lock {}/lock is held by pid 4242 "
                                     "on gpu-box since ",
                                     D())))
      << r.out;
  EXPECT_TRUE(Has(r.out, "other-bench --x; waiting up to 0.5 s for it (--lock-timeout)\n"))
      << r.out;
  // Then, after the wait, the refusal.
  EXPECT_TRUE(Has(r.out, "waited 0.5 s. Wait for it to finish, or raise --lock-timeout")) << r.out;
}

TEST_F(UxCli, ACiLogGetsPlainProgressLinesAndTheRunItsEta) {
  // stderr is a pipe here, as in a CI log: no carriage returns, a line every 0.15 s of a leg.
  auto r = Vouch(
      "run --min-busy-readings 3 --warmup 0 --reps 3 --progress-every 0.15 --out r -- sleep 0.5",
      kCopy);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(Has(r.out, "\r")) << r.out;
  // The first leg: progress without an ETA (nothing finished yet), then its end with one.
  EXPECT_TRUE(
      RE2::PartialMatch(r.out,
                        "\nleg 1 of 3 \\(run measured\\): running, [0-9.]+ ms so far, SM clock "
                        "[0-9]+ MHz\n"))
      << r.out;
  EXPECT_TRUE(
      RE2::PartialMatch(r.out,
                        "\nleg 1 of 3 \\(run measured\\): valid, 0\\.[0-9]+ s, SM median [0-9]+ "
                        "MHz \\(run ETA [0-9.]+ s\\)\n"))
      << r.out;
  // The second: progress with the run's ETA; the last leg's end has nothing left to run.
  EXPECT_TRUE(
      RE2::PartialMatch(r.out,
                        "\nleg 2 of 3 \\(run measured\\): running, [0-9.]+ ms so far, SM clock "
                        "[0-9]+ MHz; run ETA [0-9.]+ m?s\n"))
      << r.out;
  EXPECT_TRUE(
      RE2::PartialMatch(r.out,
                        "\nleg 3 of 3 \\(run measured\\): valid, 0\\.[0-9]+ s, SM median [0-9]+ "
                        "MHz\n"))
      << r.out;
  auto quiet =
      Vouch("run --min-busy-readings 3 --warmup 0 --reps 1 --progress-every 0 --out q -- sleep 0.4",
            kCopy);
  EXPECT_EQ(quiet.rc, 0) << quiet.out;
  EXPECT_FALSE(Has(quiet.out, "running,")) << quiet.out;
  auto bad = Vouch("run --progress-every -1 -- true", kCopy);
  EXPECT_EQ(bad.rc, 64) << bad.out;
}

TEST_F(UxCli, DoctorNamesComputeProcessesInWords) {
  fs::copy_file(kScenario, D("s.jsonl"));
  std::ofstream(D("s.jsonl.static.json"))
      << R"({"processes":{"0":[{"pid":999999,"name":"python3","used_bytes":1073741824},)"
      << R"({"pid":4242,"name":"other-job"}]}})";
  auto r = Vouch("doctor", "VOUCH_SIM=" + D("s.jsonl"));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(
      Has(r.out, "  compute processes: pid 999999 python3 (holds 1.0 GiB), pid 4242 other-job\n"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "\"pid\"")) << r.out;  // no raw JSON
  auto j = Vouch("doctor --json", "VOUCH_SIM=" + D("s.jsonl"));
  EXPECT_EQ(nlohmann::json::parse(j.out)["gpus"][0]["processes"][1]["pid"], 4242) << j.out;
}

TEST_F(UxCli, RunSummaryKeepsItsColumnsAndNoValidLegIsNotComplete) {
  const std::string name(60, 'n');
  Script("leg.sh", "sleep 0.4\necho '{\"name\":\"" + name +
                       "\",\"value\":131.5,\"unit\":\"tok/s\",\"better\":\"higher\"}' >> "
                       "\"$VOUCH_METRICS\"\n");
  auto r = Vouch("run --min-busy-readings 3 --warmup 0 --reps 2 --out r -- ./leg.sh", kCopy);
  EXPECT_EQ(r.rc, 0) << r.out;
  // Every summary row's "median" starts at the same column, past the 60-character name.
  std::vector<std::size_t> at;
  for (std::size_t p = r.out.find("\n  ", r.out.find("summary over valid legs"));
       p != std::string::npos; p = r.out.find("\n  ", p + 1))
    if (std::size_t m = r.out.find(" median ", p);
        m != std::string::npos && m < r.out.find('\n', p + 1))
      at.push_back(m - p);
  ASSERT_GE(at.size(), 3u) << r.out;
  for (auto a : at) EXPECT_EQ(a, at.front()) << r.out;
  EXPECT_TRUE(Has(r.out, "  " + name + " median        131.5 tok/s")) << r.out;
  // Byte counts read as bytes.
  EXPECT_TRUE(RE2::PartialMatch(r.out,
                                "vouch.peak_rss_bytes +median +[0-9.]+ (KiB|MiB) "
                                "+min [0-9.]+ (KiB|MiB) max"))
      << r.out;
  // Every planned leg ran and none is valid: not "complete".
  auto none =
      Vouch("run --min-busy-readings 100000 --warmup 0 --reps 1 --out n -- sleep 0.3", kCopy);
  EXPECT_EQ(none.rc, 1) << none.out;
  EXPECT_TRUE(Has(none.out, "run ended with NO VALID LEG (every planned leg ran) started "))
      << none.out;
  EXPECT_FALSE(Has(none.out, "run complete")) << none.out;
  EXPECT_EQ(Json("n/record.json")["status"], "complete");  // the record's word is unchanged
}

TEST_F(UxCli, GateSaysSimulatedOnceInEveryFormAndBytesInUnits) {
  Script("leg.sh",
         "sleep 0.4\n"
         "echo '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\",\"better\":\"higher\"}' >> "
         "\"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"weights\",\"value\":4400000000,\"unit\":\"bytes\",\"better\":"
         "\"lower\"}' >> \"$VOUCH_METRICS\"\n");
  auto b =
      Vouch("baseline --min-busy-readings 3 --trials 2 --baseline base.json -- ./leg.sh", kCopy);
  ASSERT_EQ(b.rc, 0) << b.out;
  EXPECT_EQ(Json("base.json")["clock"]["simulated"], true);
  auto g = Vouch(
      "gate --min-busy-readings 3 --baseline base.json --warmup 0 --reps 1 --out g --markdown "
      "pr.md -- ./leg.sh",
      kCopy);
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_TRUE(Has(g.out, "weights  bytes  4.098 GiB  4.098 GiB  +0.00%")) << g.out;
  EXPECT_FALSE(Has(g.out, "4400000000")) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "caveat: SIMULATED: the baseline and this run were taken on a simulated device; "
                  "the clocks are a replay, not a measurement\n"))
      << g.out;
  EXPECT_TRUE(Has(g.out,
                  "gate: pass (2 pass, 0 warn, 0 fail); SIMULATED device, not a "
                  "measurement\n"))
      << g.out;
  std::ifstream in(D("pr.md"));
  std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(md.rfind("**vouch gate: pass (2 pass, 0 warn, 0 fail); SIMULATED device, not a "
                     "measurement**",
                     0),
            0u)
      << md;
  EXPECT_TRUE(Has(md, "| weights | bytes | 4.098 GiB | 4.098 GiB |")) << md;
  auto j = Vouch("gate --baseline base.json --json g");
  EXPECT_EQ(j.rc, 0) << j.out;
  auto gj = nlohmann::json::parse(j.out);
  EXPECT_EQ(gj["simulated"], true);
  EXPECT_EQ(gj["caveats"].size(), 1u) << j.out;
  EXPECT_EQ(gj["rows"][1]["baseline"], 4400000000.0);  // JSON keeps the number
}

TEST_F(UxCli, VouchsOwnOutputDoesNotMakeACheckoutDirty) {
  auto git = [&](const std::string& args) {
    return testing_util::Shell(fmt::format(
        "cd {} && git -c user.name=t -c user.email=t@t -c init.defaultBranch=main {}", D(), args));
  };
  ASSERT_EQ(git("init -q . && echo x > src.txt && git add src.txt && git commit -qm x").rc, 0);
  const std::string run = "run --min-busy-readings 3 --warmup 0 --reps 1";
  auto first = Vouch(run + " -- sleep 0.3", kCopy);  // the default --out, in the checkout
  ASSERT_EQ(first.rc, 0) << first.out;
  std::string first_dir, second_dir;
  ASSERT_TRUE(RE2::PartialMatch(first.out, "record: (vouch-run-[0-9-]+)/record", &first_dir))
      << first.out;
  auto second = Vouch(run + " -- sleep 0.3", kCopy);
  ASSERT_EQ(second.rc, 0) << second.out;
  ASSERT_TRUE(RE2::PartialMatch(second.out, "record: (vouch-run-[0-9-]+)/record", &second_dir))
      << second.out;
  auto rev = Json(second_dir + "/record.json")["revisions"][0];
  EXPECT_EQ(rev["dirty"], false) << rev.dump();
  // The first run's folder and the lock file.
  EXPECT_EQ(rev["vouch_output_ignored"], nlohmann::json({"lock", first_dir + "/"})) << rev.dump();
  EXPECT_FALSE(rev.contains("dirty_paths")) << rev.dump();
  // A baseline file and a gate's Markdown are vouch's too; a changed source file is not.
  std::ofstream(D("base.json")) << "{\n  \"schema\": \"vouch.baseline\"\n}\n";
  std::ofstream(D("pr.md")) << "**vouch gate: pass**\n";
  std::ofstream(D("src.txt")) << "changed\n";
  std::ofstream(D("notes.txt")) << "mine\n";
  auto third = Vouch(run + " --out third -- sleep 0.3", kCopy);
  ASSERT_EQ(third.rc, 0) << third.out;
  rev = Json("third/record.json")["revisions"][0];
  EXPECT_EQ(rev["dirty"], true) << rev.dump();
  EXPECT_EQ(rev["dirty_paths"], nlohmann::json({"src.txt", "notes.txt"})) << rev.dump();
  EXPECT_EQ(rev["vouch_output_ignored"].size(), 5u) << rev.dump();  // + 2nd run, base.json, pr.md
}

TEST_F(UxCli, ArmsAndClockPairSayOneThingInTheRightColumn) {
  std::ofstream(D("a.bin")) << "same bytes";
  std::ofstream(D("b.bin")) << "same bytes";
  auto same = Vouch("arms --artifact-a a.bin --artifact-b b.bin");
  EXPECT_EQ(same.rc, 1) << same.out;
  EXPECT_TRUE(Has(same.out, "same_artifact")) << same.out;
  EXPECT_FALSE(Has(same.out, "only the artifact hashes differ")) << same.out;  // no contradiction
  std::ofstream(D("c.bin")) << "other bytes";
  auto hash_only = Vouch("arms --artifact-a a.bin --artifact-b c.bin");
  EXPECT_EQ(hash_only.rc, 1) << hash_only.out;
  EXPECT_TRUE(Has(hash_only.out, "only the artifact hashes differ")) << hash_only.out;

  auto s = Vouch("clock sample --min-busy-readings 3 --quiet --out w -- sleep 0.5", kCopy);
  ASSERT_EQ(s.rc, 0) << s.out;
  auto p = Vouch("clock pair w/window.json w/window.json --min-busy-readings 100000");
  EXPECT_EQ(p.rc, 3) << p.out;
  EXPECT_TRUE(Has(p.out, "  FAIL   window A valid ")) << p.out;
  EXPECT_TRUE(RE2::PartialMatch(p.out, "FAIL   window A valid +A: invalid  B: -\n")) << p.out;
  EXPECT_TRUE(RE2::PartialMatch(p.out, "FAIL   window B valid +A: -  B: invalid\n")) << p.out;
}

TEST_F(UxCli, TheReproduceLineHasTheGlobalOptionsAndTheDirectory) {
  auto r = Vouch("run --min-busy-readings 3 --warmup 0 --reps 1 --out r -- sleep 0.3", kCopy);
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string line = Json("r/record.json")["recipe"]["reproduce"];
  EXPECT_EQ(line, fmt::format("cd {0} && VOUCH_SIM_START=23.3 vouch --sim {1} --lock-file {0}/lock "
                              "run --min-busy-readings 3 --warmup 0 --reps 1 --out r -- sleep 0.3",
                              fs::canonical(D()).string(), kScenario));
  EXPECT_TRUE(Has(r.out, "reproduce: " + line + "\n")) << r.out;
  EXPECT_EQ(Json("r/record.json")["recipe"]["cwd"], fs::canonical(D()).string());
}

TEST_F(UxCli, PullRequestMarkdownFitsInAGitHubCommentWithWhatMattersFirst) {
  // 700 metrics with long names (as nvbench writes them); the first five 10 % slower.
  Script("leg.sh",
         "sleep 0.4\ni=0\nwhile [ $i -lt 700 ]; do v=1; [ $i -lt 5 ] && v=$(cat slow); echo "
         "\"{\\\"name\\\":\\\"bench_$i[Device=0,Elements=16777216].nv/cold/time/gpu/mean\\\","
         "\\\"value\\\":$v,\\\"unit\\\":\\\"s\\\",\\\"better\\\":\\\"lower\\\"}\"; i=$((i+1)); "
         "done >> \"$VOUCH_METRICS\"\n");
  std::ofstream(D("slow")) << "1";
  auto b =
      Vouch("baseline --min-busy-readings 3 --trials 2 --baseline base.json -- ./leg.sh", kCopy);
  ASSERT_EQ(b.rc, 0) << b.out.substr(0, 2000);
  std::ofstream(D("slow")) << "1.1";
  auto g = Vouch(
      "gate --min-busy-readings 3 --baseline base.json --warmup 0 --reps 1 --out g --markdown "
      "pr.md -- ./leg.sh",
      kCopy);
  EXPECT_EQ(g.rc, 1) << g.out.substr(0, 3000);
  EXPECT_TRUE(Has(g.out,
                  "is over GitHub's 65536 for a comment: pr.md holds the rows that matter "
                  "first, pr.full.md every row"))
      << g.out.substr(g.out.size() - 3000);
  auto read = [&](const std::string& f) {
    std::ifstream in(D(f));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string md = read("pr.md"), full = read("pr.full.md");
  EXPECT_LE(md.size(), 65536u);
  EXPECT_GT(full.size(), 65536u);
  EXPECT_EQ(md.rfind("**vouch gate: fail (695 pass, 4 warn, 1 fail); SIMULATED device", 0), 0u)
      << md.substr(0, 300);
  // The failing headline first, then the four warnings, then the fold of passing rows.
  const auto table = md.find("|---|---|---:|");
  ASSERT_NE(table, std::string::npos);
  const std::string first = md.substr(md.find('\n', table) + 1, 40);
  EXPECT_EQ(first.rfind("| bench_0[Device=0", 0), 0u) << first;
  EXPECT_TRUE(Has(md, "| **FAIL** |")) << md.substr(0, 2000);
  const auto warn4 = md.find("| bench_4[");
  const auto fold = md.find("<details><summary>");
  ASSERT_NE(warn4, std::string::npos);
  ASSERT_NE(fold, std::string::npos);
  EXPECT_LT(warn4, fold);
  EXPECT_TRUE(RE2::PartialMatch(md, "of 695 passing or skipped metrics</summary>"))
      << md.substr(fold, 200);
  EXPECT_TRUE(
      RE2::PartialMatch(md,
                        "\n[0-9]+ of 700 rows not shown \\(0 of them failing, inconclusive or "
                        "warning\\): a pull request comment holds at most 65536 characters; every "
                        "row is in `pr.full.md`\n"))
      << md.substr(md.size() - 1500);
  std::size_t rows = 0;
  for (std::size_t p = full.find("\n| bench_"); p != std::string::npos;
       p = full.find("\n| bench_", p + 1))
    ++rows;
  EXPECT_EQ(rows, 700u);
}

TEST_F(UxCli, ATerminalGetsOneRedrawnLineWithTheRunsEta) {
  // script(1) gives vouch a terminal for stderr.
  auto r = testing_util::Shell(fmt::format(
      "cd {0} && VOUCH_LOCK_FILE={0}/lock script -qec \"{1} {2} run --min-busy-readings 3 "
      "--warmup 0 --reps 2 --out r -- sleep 0.6 >/dev/null\" /dev/null",
      D(), kCopy, VOUCH_BINARY));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(
      r.out, "\r\\[leg 1 of 2: run measured\\] +[0-9.]+ s  SM clock [0-9]+ MHz\033\\[K\r"))
      << r.out;
  EXPECT_TRUE(
      RE2::PartialMatch(r.out,
                        "\r\\[leg 2 of 2: run measured\\] +[0-9.]+ s  SM clock [0-9]+ MHz  run "
                        "ETA [0-9.]+ m?s\033\\[K\r"))
      << r.out;
  // On a narrow terminal the line is cut to fit (a wrapped line cannot be redrawn).
  auto narrow = testing_util::Shell(fmt::format(
      "cd {0} && VOUCH_LOCK_FILE={0}/lock script -qec \"stty cols 30; {1} {2} run "
      "--min-busy-readings 3 --warmup 0 --reps 1 --out n -- sleep 0.6 >/dev/null\" /dev/null",
      D(), kCopy, VOUCH_BINARY));
  EXPECT_EQ(narrow.rc, 0) << narrow.out;
  EXPECT_TRUE(Has(narrow.out, "\r[leg 1 of 1: run measured]   \033[K")) << narrow.out;  // 29
  // The live line is cleared before the leg's own line, and no plain progress line is printed.
  EXPECT_TRUE(Has(r.out, "\r\033[Kleg 1 of 2 (run measured): valid, ")) << r.out;
  EXPECT_FALSE(Has(r.out, "running,")) << r.out;
}

}  // namespace
}  // namespace vouch
