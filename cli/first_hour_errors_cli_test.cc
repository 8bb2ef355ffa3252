// Issue 37 item 3: every error at the moment it is knowable, with the fix, through the real
// binary on the simulated device. Each test fails on the code before the issue.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <re2/re2.h>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kOne = "--min-busy-readings 1";

// tok_s through the channel (VALUE, with a direction unless BETTER is empty).
std::string TokLeg(const std::string& better = "higher", const std::string& value = "100") {
  return fmt::format(
      "sleep 0.3\necho '{{\"name\":\"tok_s\",\"value\":{},\"unit\":\"tok/s\"{}}}' >> "
      "\"$VOUCH_METRICS\"\n",
      value, better.empty() ? "" : ",\"better\":\"" + better + "\"");
}

class FirstHourErrorsCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(
        fmt::format("cd {} && VOUCH_STORE= VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} timeout 120 {} {}",
                    D(), D(), kBusy, VOUCH_BINARY, args));
  }
  int Legs(const std::string& dir) const { return static_cast<int>(Json(dir)["legs"].size()); }
};

// json: on a stdout that mixes a log line with the JSON stops at the first leg, saying stdout
// must be one JSON document and which line was not JSON (it ran every leg, then gave the
// parser's own error for each).
TEST_F(FirstHourErrorsCli, AJsonSourceOnMixedStdoutStopsAtTheFirstLeg) {
  Script("leg.sh", "sleep 0.3\necho 'loading model...'\necho '{\"tok_s\": 5}'\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 4 --out r --metric json:tok_s:tok/s:higher:/tok_s -- ./leg.sh",
      kOne));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "stopped at leg 1 of 4 (run measured): its metrics could not be read"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "not one JSON document, so metric 'tok_s' cannot be read")) << r.out;
  EXPECT_TRUE(Has(r.out, "line 1 (of 2) is not JSON (line 1: 'loading model...')")) << r.out;
  EXPECT_TRUE(Has(r.out, "print only the JSON there (logs to stderr)")) << r.out;
  EXPECT_FALSE(Has(r.out, "parse error")) << r.out;
  EXPECT_EQ(Legs("r/record.json"), 1);
  // JSON lines: said as such.
  Script("lines.sh", "sleep 0.3\necho '{\"tok_s\": 5}'\necho '{\"tok_s\": 6}'\n");
  auto l = Vouch(fmt::format(
      "run {} --warmup 0 --reps 2 --out l --metric json:tok_s:tok/s:higher:/tok_s -- ./lines.sh",
      kOne));
  EXPECT_EQ(l.rc, 1) << l.out;
  EXPECT_TRUE(Has(l.out, "it holds 2 JSON documents, one per line")) << l.out;
}

// A --headline typo stops the baseline at its first trial with the metrics it has, and writes
// no baseline (it ran every trial first).
TEST_F(FirstHourErrorsCli, ABaselineHeadlineTypoIsRefusedAtTheFirstTrial) {
  Script("tok.sh", TokLeg());
  auto r = Vouch(fmt::format(
      "baseline {} --trials 5 --headline tok_ss --baseline b.json --out b -- ./tok.sh", kOne));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "stopped at leg 1 of 5 (run measured): it reported no metric 'tok_ss' "
                  "(--headline); did you mean 'tok_s'?"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "the metrics it reported: tok_s (tok/s)")) << r.out;
  EXPECT_EQ(Legs("b/record.json"), 1);
  EXPECT_FALSE(fs::exists(D("b.json")));
}

// A metric without a direction: how to give one, at the first trial, not "give --metric".
TEST_F(FirstHourErrorsCli, AMetricWithoutADirectionSaysHowToGiveOne) {
  Script("tok.sh", TokLeg(""));
  auto r = Vouch(fmt::format("baseline {} --trials 3 --baseline b.json --out b -- ./tok.sh", kOne));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "stopped at leg 1 of 3 (run measured): metric tok_s has no direction"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "\"better\": \"higher\" or \"lower\" on each $VOUCH_METRICS line"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "the BETTER field of a --metric source")) << r.out;
  EXPECT_FALSE(Has(r.out, "give --metric")) << r.out;
  EXPECT_FALSE(fs::exists(D("b.json")));
}

// The gate reads its legs with the baseline's --metric sources (it ran its legs and reported
// the metric MISSING); gate --headline is accepted and documented; a wrong one lists the
// baseline's metrics.
TEST_F(FirstHourErrorsCli, TheGateTakesItsSourcesAndHeadlineFromTheBaseline) {
  Script("leg.sh", "sleep 0.3\necho '{\"tok_s\": 100, \"lat_ms\": 5}'\n");
  auto b = Vouch(fmt::format(
      "baseline {} --trials 2 --baseline b.json --out b --metric json:tok_s:tok/s:higher:/tok_s "
      "--metric json:lat_ms:ms:lower:/lat_ms -- ./leg.sh",
      kOne));
  ASSERT_EQ(b.rc, 0) << b.out;
  EXPECT_EQ(Json("b.json")["metric_sources"].size(), 2u) << Json("b.json").dump(2);
  auto g = Vouch(fmt::format("gate {} --baseline b.json --out g -- ./leg.sh", kOne));
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "reading the legs' metrics as the baseline did: --metric "
                  "json:tok_s:tok/s:higher:/tok_s --metric json:lat_ms:ms:lower:/lat_ms"))
      << g.out;
  EXPECT_FALSE(Has(g.out, "MISSING")) << g.out;
  EXPECT_FALSE(Has(g.out, "missing")) << g.out;
  auto h =
      Vouch(fmt::format("gate {} --baseline b.json --headline lat_ms --out h -- ./leg.sh", kOne));
  EXPECT_EQ(h.rc, 0) << h.out;
  EXPECT_TRUE(Has(h.out, "lat_ms (given with gate --headline)")) << h.out;
  auto typo = Vouch("gate --baseline b.json --headline lat_s --out t -- ./leg.sh");
  EXPECT_EQ(typo.rc, 64) << typo.out;
  EXPECT_TRUE(Has(typo.out,
                  "--headline lat_s: the baseline has no such metric (did you mean "
                  "'lat_ms'?); it has tok_s, lat_ms"))
      << typo.out;
  EXPECT_FALSE(fs::exists(D("t")));
  auto help = Vouch("help gate");
  EXPECT_EQ(help.rc, 0) << help.out;
  EXPECT_TRUE(Has(help.out, "--headline")) << help.out;
}

// A command given without `--` gets the line that works.
TEST_F(FirstHourErrorsCli, AForgottenDoubleDashGetsAHint) {
  auto r = Vouch("run --reps 2 python3 bench.py --size 4");
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "the command to measure goes after `--` (what follows it is never read "
                  "as an option): vouch run --reps 2 -- python3 bench.py --size 4"))
      << r.out;
  auto ab = Vouch("ab --a-env X=1 --b-env X=2 ./leg.sh");
  EXPECT_EQ(ab.rc, 64) << ab.out;
  EXPECT_TRUE(Has(ab.out,
                  "--env './leg.sh': expected NAME=VALUE; if it is the command, the "
                  "command to measure goes after `--`"))
      << ab.out;
  // Not for a command that takes no command.
  EXPECT_FALSE(Has(Vouch("history list extra").out, "goes after `--`"));
}

// vouch.metric outside a leg warns that the number is not recorded (it did nothing, silently).
TEST_F(FirstHourErrorsCli, APythonMetricOutsideALegIsWarnedAbout) {
  auto r = testing_util::Shell(
      fmt::format("cd {} && env -u VOUCH_METRICS PYTHONPATH={}/python python3 -c 'import vouch; "
                  "vouch.metric(\"tok_s\", 1.0, \"tok/s\", \"higher\")'",
                  D(), VOUCH_SOURCE_DIR));
  if (Has(r.out, "No module named") || r.rc == 127) GTEST_SKIP() << r.out;
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "RuntimeWarning: vouch.metric('tok_s'): not recorded: this process is "
                  "not inside a vouch leg"))
      << r.out;
}

// report --trend of a misspelled metric: the names, exit 1, no page (it wrote an empty one).
TEST_F(FirstHourErrorsCli, AReportOfAMisspelledTrendMetricListsTheMetrics) {
  Script("tok.sh", TokLeg());
  ASSERT_EQ(Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./tok.sh", kOne)).rc, 0);
  ASSERT_EQ(Vouch("history add --store h.sqlite r").rc, 0);
  auto t = Vouch("report --store h.sqlite --trend tok_ss -o t.html");
  EXPECT_EQ(t.rc, 1) << t.out;
  EXPECT_TRUE(Has(t.out, "vouch report: no metric 'tok_ss' in ")) << t.out;
  EXPECT_TRUE(Has(t.out, "; did you mean 'tok_s'?")) << t.out;
  EXPECT_TRUE(Has(t.out, "metrics it has: ")) << t.out;
  EXPECT_FALSE(fs::exists(D("t.html")));
}

// A crash: the leg's reason is the crash, not "give the command more work"; no ETA for legs
// that will not run. A Ctrl-C (the leg interrupts vouch itself at the third leg, so the moment
// is exact): no ETA after it either.
TEST_F(FirstHourErrorsCli, ACrashOrCtrlCGivesNoWorkAdviceAndNoEta) {
  Script("crash.sh", "sleep 0.3\nkill -SEGV $$\n");
  auto r = Vouch("run --warmup 0 --reps 3 --out r -- ./crash.sh");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "SIGSEGV")) << r.out;
  EXPECT_FALSE(Has(r.out, "more work")) << r.out;
  EXPECT_FALSE(Has(r.out, "ETA")) << r.out;
  Script("int.sh",
         "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\nsleep 0.3\n"
         "[ $n -eq 2 ] && kill -INT $PPID && sleep 2\n" +
             TokLeg());
  auto i = Vouch(fmt::format("run {} --warmup 0 --reps 6 --out i -- ./int.sh", kOne));
  EXPECT_EQ(i.rc, 130) << i.out;
  std::string line;
  const std::string out = i.out;
  EXPECT_TRUE(RE2::PartialMatch(out, R"((leg 3 of 6 \(run measured\)[^\n]*\n))", &line)) << out;
  EXPECT_FALSE(Has(line, "ETA")) << line;
  EXPECT_FALSE(Has(out, "more work")) << out;
}

// An interrupted ab says what its finished pairs show (it printed nothing about them). Its
// legs: 2 warm-ups, then blocks of 4 (2 pairs); the 11th leg interrupts vouch: 2 blocks done.
TEST_F(FirstHourErrorsCli, AnInterruptedAbPrintsItsPairsSoFar) {
  // The channel line's value is the shell's: written with double quotes.
  Script("ab.sh",
         "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\nsleep 0.3\n"
         "[ $n -eq 10 ] && kill -INT $PPID && sleep 2\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$((100 + X)),\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(
      fmt::format("ab {} --pairs 8 --seed 1 --a-env X=0 --b-env X=5 --out r -- ./ab.sh", kOne));
  EXPECT_EQ(r.rc, 130) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "vouch ab: interrupted after 4 of 8 planned pairs (4 valid), headline "
                  "tok_s"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "the pairs so far: B/A ratio 1.0500")) << r.out;
  EXPECT_TRUE(Has(r.out, "not a verdict: the design did not finish")) << r.out;
}

// `baseline` and `gate` on the same data give one count of trials (33 against 91 before: two
// rules). The trials' values are fixed (a counter picks them): a noisy baseline, then a gate
// whose change sits across the threshold.
TEST_F(FirstHourErrorsCli, BaselineAndGateAdviseOneCountOnTheSameData) {
  Script("noisy.sh",
         "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\nsleep 0.3\n"
         "set -- 100 106 95 103 97 99 97 98\nshift $n\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$1,\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto b =
      Vouch(fmt::format("baseline {} --trials 5 --baseline b.json --out b -- ./noisy.sh", kOne));
  ASSERT_EQ(b.rc, 0) << b.out;
  std::string bm;
  const std::string bout = b.out;
  ASSERT_TRUE(RE2::PartialMatch(bout, "about ([0-9]+) trials in all", &bm)) << bout;
  auto g = Vouch(fmt::format("gate {} --baseline b.json --reps 3 --out g -- ./noisy.sh", kOne));
  EXPECT_EQ(g.rc, 2) << g.out;
  std::string gm;
  const std::string gout = g.out;
  ASSERT_TRUE(RE2::PartialMatch(gout, "were nothing changed, ([0-9]+) of each", &gm)) << gout;
  EXPECT_EQ(bm, gm) << bout << gout;
}

// --pairs: the help's range is the one the check applies.
TEST_F(FirstHourErrorsCli, PairsHelpAndCheckAgree) {
  auto help = Vouch("ab --help");
  EXPECT_TRUE(Has(help.out, "INT in [4 - 10000]")) << help.out;
  EXPECT_FALSE(Has(help.out, "[2 - 10000]")) << help.out;
  auto two = Vouch("ab --pairs 2 --a-env X=1 --b-env X=2 -- true");
  EXPECT_EQ(two.rc, 64) << two.out;
  EXPECT_TRUE(Has(two.out, "--pairs 2: a verdict needs at least 4 pairs")) << two.out;
}

// history add of a folder that is not there: an error, and no store created.
TEST_F(FirstHourErrorsCli, HistoryAddOfAMissingFolderCreatesNoStore) {
  auto r = Vouch("history add --store h.sqlite nope");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch history add: nope: no such file or folder")) << r.out;
  EXPECT_FALSE(fs::exists(D("h.sqlite")));
}

// doctor: the clock event reasons are named, or "none", never blank.
TEST_F(FirstHourErrorsCli, DoctorPrintsNoBlankReasons) {
  auto r = Vouch("doctor");
  EXPECT_TRUE(Has(r.out, "  now: SM ")) << r.out;
  EXPECT_FALSE(Has(r.out, "reasons \n")) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(r.out, "reasons [a-z_,]+\n")) << r.out;
}

// Item 4: values in full (no "1.23457e+07"), the simulated device named once in the history
// list, and the A/B Markdown names what A and B were.
TEST_F(FirstHourErrorsCli, ValuesTheSimulatedDeviceAndTheArmsAreSaidPlainly) {
  Script("big.sh", TokLeg("higher", "12345678"));
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 2 --out r -- ./big.sh", kOne));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "12,345,678")) << r.out;
  EXPECT_FALSE(Has(r.out, "e+07")) << r.out;
  ASSERT_EQ(Vouch("history add --store h.sqlite r").rc, 0);
  auto list = Vouch("history list --store h.sqlite");
  EXPECT_TRUE(Has(list.out, "(simulated)")) << list.out;
  EXPECT_FALSE(Has(list.out, "(simulated) (simulated)")) << list.out;
  auto trend = Vouch("history trend --store h.sqlite tok_s");
  EXPECT_TRUE(Has(trend.out, "12,345,678")) << trend.out;
  EXPECT_FALSE(Has(trend.out, "e+07")) << trend.out;
  Script("ab.sh",
         "sleep 0.3\necho \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$((100 + X)),"
         "\\\"unit\\\":\\\"tok/s\\\",\\\"better\\\":\\\"higher\\\"}\" >> "
         "\"$VOUCH_METRICS\"\n");
  auto ab = Vouch(fmt::format(
      "ab {} --pairs 4 --seed 1 --a-env X=0 --b-env X=5 --out ab --markdown - -- ./ab.sh", kOne));
  EXPECT_TRUE(ab.rc == 0 || ab.rc == 2) << ab.out;
  EXPECT_TRUE(Has(ab.out, "| A | `./ab.sh` with `X=0` |\n| B | `./ab.sh` with `X=5` |\n"))
      << ab.out;
}

}  // namespace
}  // namespace vouch
