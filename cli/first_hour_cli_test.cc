// The first hour of a new user (issue 22), through the real binary: a simulated run of their
// own command, a closed output pipe, a failing command's own words, a number vouch was not
// told to read, a warm-up that no leg could pass, a baseline replaced by mistake, and the
// --markdown / help forms the README lists.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

// A leg that reports tok_s through the channel.
constexpr const char* kTokLeg =
    "sleep 0.3\necho '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\",\"better\":"
    "\"higher\"}' >> \"$VOUCH_METRICS\"\n";

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

class FirstHourCli : public testing_util::ScratchDirTest {
 protected:
  // VOUCH_SIM is the busy stream unless ENV says otherwise (ENV goes before the binary).
  Res Vouch(const std::string& args, const std::string& env = "VOUCH_SIM=" + kBusy) const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_STORE= VOUCH_LOCK_FILE={}/lock {} {} {}",
                                           D(), D(), env, VOUCH_BINARY, args));
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(D(rel));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// Item 1: a built-in scenario by name accepts a user's own leg of a few seconds, from any
// directory, as the README shows; an unknown name lists the built-in ones.
TEST_F(FirstHourCli, ABuiltInSimulatedScenarioAcceptsAUsersOwnLeg) {
  // The README's example (with no warm-up, to save 4 s).
  auto r = Vouch("--sim h200-busy run --warmup 0 --reps 3 --out r -- sleep 4", "");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "SIMULATED DEVICE: simulated device replaying built-in scenario h200-busy "
                  "(tests/data/sim/h200_copy_busy.jsonl)"))
      << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["valid_legs"], 3) << rec["legs"].dump();
  // The reproduce line names the scenario, not a file in this directory.
  EXPECT_TRUE(Has(rec["recipe"]["reproduce"].get<std::string>(), "vouch --sim h200-busy "))
      << rec["recipe"].dump();
  auto bad = Vouch("--sim h200-bsuy doctor", "");
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out,
                  "no file and no built-in scenario named 'h200-bsuy' (built-in: "
                  "h200-busy, h200x2-busy"))
      << bad.out;
  auto help = Vouch("--help", "");
  EXPECT_TRUE(Has(help.out, "VOUCH_SIM_START=S")) << help.out;
}

// Item 2: `vouch run ... 2>&1 | head -1` finishes the run (exit 0, record complete) instead of
// dying at its next write, and `show` does not guess a cause it does not know.
TEST_F(FirstHourCli, AClosedOutputPipeDoesNotEndTheRun) {
  std::ofstream(D("pipe.sh")) << fmt::format(
      "set -o pipefail\ncd {0}\nVOUCH_LOCK_FILE={0}/lock VOUCH_SIM={1} {2} run --min-busy-readings "
      "1 --warmup 1 --reps 3 --out r -- sh -c 'echo hello; sleep 0.3' 2>&1 | head -1\n"
      "echo \"rc=${{PIPESTATUS[0]}}\"\n",
      D(), kBusy, VOUCH_BINARY);
  auto r = testing_util::Shell("bash " + D("pipe.sh"));
  EXPECT_TRUE(Has(r.out, "rc=0\n")) << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["status"], "complete") << r.out;
  EXPECT_EQ(rec["legs"].size(), 4u);
  auto show = Vouch("show r");
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_FALSE(Has(show.out, "SIGKILL")) << show.out;
  EXPECT_FALSE(Has(show.out, "running")) << show.out;
}

// Item 3: a failing command's last stderr lines (bounded, control characters visible) and
// where the whole file is, once; where stdout went.
TEST_F(FirstHourCli, AFailingCommandsOwnWordsAreShown) {
  std::string body;
  for (int i = 1; i <= 15; ++i) body += fmt::format("echo 'error line {}' >&2\n", i);
  body += "printf 'bad \\033[31mred\\n' >&2\nexit 3\n";
  Script("fail.sh", body);
  auto r = Vouch("run --warmup 1 --reps 3 --out r -- ./fail.sh");
  EXPECT_EQ(r.rc, 1) << r.out;
  const std::string err = D("r/legs/001-run-warmup/stderr.txt");
  EXPECT_TRUE(Has(r.out, fmt::format("the last lines of leg 1's stderr (all of it: {}):\n", err)))
      << r.out;
  EXPECT_TRUE(Has(r.out, "  | error line 7\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "  | error line 15\n")) << r.out;
  EXPECT_FALSE(Has(r.out, "error line 6\n")) << r.out;  // ten lines, no more
  EXPECT_TRUE(Has(r.out, "  | bad \\x1b[31mred\n")) << r.out;
  EXPECT_EQ(Count(r.out, "| error line 15"), 1) << r.out;
  EXPECT_LE(Count(r.out, "exited with status 3"), 2) << r.out;
  EXPECT_TRUE(Has(
      r.out, fmt::format("the command's output is kept, not shown: {}/legs/*/stdout.txt", D("r"))))
      << r.out;
}

// Item 4: a number printed only on stdout, with no --metric, is warned about once, with what
// stdout looked like and the two ways to read it.
TEST_F(FirstHourCli, ALegWithNoMetricOfItsOwnIsWarnedAbout) {
  Script("leg.sh", "echo '{\"tok_s\": 123.4}'\necho more\nsleep 0.3\n");
  auto r = Vouch("run --min-busy-readings 1 --warmup 1 --reps 2 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(Count(r.out, "reported no metric of its own"), 1) << r.out;
  EXPECT_TRUE(Has(r.out, "give --metric")) << r.out;
  EXPECT_TRUE(Has(r.out, "$VOUCH_METRICS")) << r.out;
  EXPECT_TRUE(Has(r.out, "Its stdout began: {\"tok_s\": 123.4} (")) << r.out;
  // A leg that reports through the channel is not warned about.
  Script("tok.sh", kTokLeg);
  auto ok = Vouch("run --min-busy-readings 1 --warmup 0 --reps 1 --out r2 -- ./tok.sh");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_FALSE(Has(ok.out, "no metric of its own")) << ok.out;
}

// Item 6: a warm-up window with fewer readings than the busy-reading floor stops the run
// before the measured legs, with the reason and the fix; --keep-going runs them.
TEST_F(FirstHourCli, AWarmupTooShortForTheFloorStopsTheRun) {
  auto r = Vouch("run --warmup 1 --reps 4 --out r -- true");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "stopped after the warm-up, before 4 measured legs:")) << r.out;
  EXPECT_TRUE(Has(r.out, "fewer than the 30 busy readings the policy needs")) << r.out;
  EXPECT_TRUE(Has(r.out, "--min-busy-readings N")) << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["legs"].size(), 1u);
  EXPECT_EQ(rec["status"], "failed");
  auto all = Vouch("run --warmup 1 --reps 2 --keep-going --out k -- true");
  EXPECT_EQ(Json("k/record.json")["legs"].size(), 3u) << all.out;
}

// Item 7: a second baseline into the same file is refused (the first one's trials are kept)
// unless --overwrite.
TEST_F(FirstHourCli, ASecondBaselineDoesNotReplaceTheFirst) {
  Script("tok.sh", kTokLeg);
  auto first =
      Vouch("baseline --min-busy-readings 1 --trials 2 --baseline b.json --out b1 -- ./tok.sh");
  ASSERT_EQ(first.rc, 0) << first.out;
  const std::string before = Read("b.json");
  auto again =
      Vouch("baseline --min-busy-readings 1 --trials 1 --baseline b.json --out b2 -- ./tok.sh");
  EXPECT_EQ(again.rc, 1) << again.out;
  EXPECT_TRUE(Has(again.out, "vouch baseline: b.json already exists")) << again.out;
  EXPECT_TRUE(Has(again.out, "--overwrite")) << again.out;
  EXPECT_FALSE(fs::exists(D("b2"))) << again.out;  // refused before any leg
  EXPECT_EQ(Read("b.json"), before);
  auto over = Vouch(
      "baseline --min-busy-readings 1 --trials 1 --overwrite --baseline b.json --out b3 -- "
      "./tok.sh");
  EXPECT_EQ(over.rc, 0) << over.out;
  EXPECT_EQ(Json("b.json")["trials"], 1);
}

// Item 8: --markdown - is stdout (gate wrote a file named '-'), history trend takes
// --markdown FILE, help for a group lists it, a misspelled trend metric is named.
TEST_F(FirstHourCli, MarkdownHelpAndTrendFormsTheReadmeLists) {
  auto help = Vouch("help history");
  EXPECT_EQ(help.rc, 0) << help.out;
  EXPECT_TRUE(Has(help.out, "history trend")) << help.out;
  EXPECT_TRUE(Has(help.out, "history add")) << help.out;
  EXPECT_EQ(Vouch("clock --help").rc, 0);

  Script("tok.sh", kTokLeg);
  ASSERT_EQ(
      Vouch("baseline --min-busy-readings 1 --trials 2 --baseline b.json --out b1 -- ./tok.sh").rc,
      0);
  auto gate = Vouch("gate --baseline b.json b1 --markdown -");
  EXPECT_EQ(gate.rc, 0) << gate.out;
  EXPECT_TRUE(Has(gate.out, "| `tok_s` |") || Has(gate.out, "| tok_s |")) << gate.out;
  EXPECT_FALSE(fs::exists(D("-"))) << gate.out;

  ASSERT_EQ(Vouch("history add --store h.sqlite b1").rc, 0);
  auto md = Vouch("history trend --store h.sqlite tok_s --markdown t.md");
  EXPECT_EQ(md.rc, 0) << md.out;
  EXPECT_TRUE(fs::exists(D("t.md"))) << md.out;
  EXPECT_TRUE(Has(Read("t.md"), "tok_s")) << Read("t.md");
  auto dash = Vouch("history trend --store h.sqlite tok_s --markdown -");
  EXPECT_EQ(dash.rc, 0) << dash.out;
  EXPECT_FALSE(fs::exists(D("-"))) << dash.out;

  auto typo = Vouch("history trend --store h.sqlite tok_ss");
  EXPECT_EQ(typo.rc, 1) << typo.out;
  EXPECT_TRUE(Has(typo.out, "no metric 'tok_ss' in")) << typo.out;
  EXPECT_TRUE(Has(typo.out, "did you mean 'tok_s'?")) << typo.out;
  EXPECT_TRUE(Has(typo.out, "vouch.wall_s")) << typo.out;
}

}  // namespace
}  // namespace vouch
