// Issue 36, class 4: names that look like vouch's, through the real binary. A metric name is
// checked in its normal form before the reserved check (an invisible character, a space at an
// end, a label that mixes scripts, a fullwidth "ｖｏｕｃｈ" are refused naming the leg and the
// metric), and every line vouch prints escapes what it did not write: a newline in a metric
// name, a stored branch or another process's name starts no line of its own, and a Markdown
// cell pings no team and links no issue.
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
using nlohmann::json;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
const std::string kRunDir = VOUCH_SOURCE_DIR "/tests/data/store/run";
constexpr const char* kFast = "--min-busy-readings 5";

class LookalikeCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 60) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  // A leg that reports tok_s and one more metric named NAME (JSON-escaped in the script).
  void LegReporting(const std::string& name) const {
    std::ofstream(D("line.jsonl")) << json({{"name", name}, {"value", 1}}).dump() << "\n";
    Script("leg.sh",
           "sleep 0.8\necho '{\"name\":\"tok_s\",\"value\":100}' >> \"$VOUCH_METRICS\"\n"
           "cat line.jsonl >> \"$VOUCH_METRICS\"\n");
  }
  // Whether TEXT has a line that starts with LINE.
  static bool HasLineStarting(const std::string& text, const std::string& line) {
    return text.rfind(line, 0) == 0 || Has(text, "\n" + line);
  }
};

TEST_F(LookalikeCli, NamesThatReadAsVouchsAreRefusedNamingTheLegAndTheMetric) {
  const struct {
    std::string name, shown, why;
  } cases[] = {
      {"vouch\u200b.wall_s", "vouch\\u200b.wall_s", "it holds an invisible character (U+200B)"},
      {" vouch.wall_s", " vouch.wall_s", "it starts or ends with a space"},
      {"g\u0440u.active_ns", "g\u0440u.active_ns",
       "its label 'g\u0440u' mixes Latin and Cyrillic letters (U+0440)"},
      {"tok\nleg 2 of 2: valid", "tok\\x0aleg 2 of 2: valid",
       "it holds a control character (U+000A)"},
  };
  int n = 0;
  for (const auto& c : cases) {
    LegReporting(c.name);
    const std::string out = fmt::format("r{}", ++n);
    auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out {} -- ./leg.sh", kFast, out));
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_TRUE(Has(r.out, fmt::format("legs/001-run-measured/metrics.jsonl:2: metric '{}' is "
                                       "refused: {}",
                                       c.shown, c.why)))
        << c.shown << "\n"
        << r.out;
    EXPECT_FALSE(HasLineStarting(r.out, "leg 2 of 2: valid")) << r.out;
    auto leg = Json(out + "/record.json")["legs"][0];
    EXPECT_EQ(leg["valid"], false) << c.shown;
    for (const auto& m : leg["metrics"]) EXPECT_NE(m["name"], c.name) << "a refused leg's metric";
  }
  // Fullwidth letters are vouch's name in NFKC: refused as reserved, like "vouch.wall_s".
  LegReporting("\uff56\uff4f\uff55\uff43\uff48.wall_s");
  auto fw = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out fw -- ./leg.sh", kFast));
  EXPECT_EQ(fw.rc, 1) << fw.out;
  EXPECT_TRUE(Has(fw.out, "metric '\uff56\uff4f\uff55\uff43\uff48.wall_s' is under 'vouch.*'"))
      << fw.out;
}

// A name that is a name (a space inside, an accent, one script per label) still counts.
TEST_F(LookalikeCli, NamesInOneScriptPerLabelAreKept) {
  LegReporting("latence_\u00b5s moy");
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast));
  ASSERT_EQ(r.rc, 0) << r.out;
  bool saw = false;
  const json rec = Json("r/record.json");
  for (const auto& m : rec["legs"][0]["metrics"]) saw |= m["name"] == "latence_\u00b5s moy";
  EXPECT_TRUE(saw);
}

// A branch stored with a newline in it (from a record vouch did not write) faked a row of
// `history list`; its cells are escaped, as are `history show`'s.
TEST_F(LookalikeCli, AStoredBranchWithANewlineFakesNoRowOfHistoryList) {
  fs::copy(kRunDir, D("r"), fs::copy_options::recursive);
  std::ifstream in(kRunDir + "/record.json");
  auto rec = json::parse(in);
  const std::string fake = "deadbeef0000 run      complete    2030-01-01T00:00:00Z";
  rec["revisions"] = json::array({{{"path", "/src"},
                                   {"git", true},
                                   {"commit", "c1"},
                                   {"dirty", false},
                                   {"branch", "main\n" + fake}}});
  std::ofstream(D("r/record.json"), std::ios::trunc) << rec.dump(1);
  auto sh = [&](const std::string& args) {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_STORE= VOUCH_LOCK_FILE={}/lock {} {}",
                                           D(), D(), VOUCH_BINARY, args));
  };
  auto add = sh("history add --store h.sqlite r");
  ASSERT_EQ(add.rc, 0) << add.out;
  auto list = sh("history list --store h.sqlite");
  EXPECT_EQ(list.rc, 0) << list.out;
  EXPECT_TRUE(Has(list.out, "main\\x0adeadbeef0000")) << list.out;
  EXPECT_FALSE(HasLineStarting(list.out, "deadbeef0000")) << list.out;
  auto j = json::parse(sh("history list --store h.sqlite --json").out);
  auto show = sh("history show --store h.sqlite " + j[0]["run_key"].get<std::string>());
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_TRUE(Has(show.out, "on main\\x0adeadbeef0000")) << show.out;
  EXPECT_FALSE(HasLineStarting(show.out, "deadbeef0000")) << show.out;
}

// Another process on the GPU names itself: `doctor` printed its newline, and the next "line"
// read as doctor's own verdict.
TEST_F(LookalikeCli, AnotherProcesssNameWithANewlineIsOneCellOfDoctor) {
  fs::copy_file(kBusy, D("sim.jsonl"));
  std::ofstream(D("sim.jsonl.static.json"))
      << json({{"processes",
                {{"0", {{{"pid", 4242}, {"name", "bench\nfit to measure (forged)"}}}}}}})
             .dump();
  auto r =
      testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} doctor",
                                      D(), D(), D("sim.jsonl"), VOUCH_BINARY));
  EXPECT_TRUE(Has(r.out, "pid 4242 bench\\x0afit to measure (forged)")) << r.out;
  EXPECT_FALSE(HasLineStarting(r.out, "fit to measure (forged)")) << r.out;
}

// A metric named "@team/perf fixes #1 GH-2" pinged a team and linked (closed, in a PR body) an
// issue from the gate's pull request comment: mentions and references are code spans.
TEST_F(LookalikeCli, AMarkdownCellPingsNoTeamAndLinksNoIssue) {
  const std::string name = "@team/perf fixes #1 GH-2";
  LegReporting(name);
  auto run = Vouch(fmt::format("run {} --warmup 0 --reps 2 --out r -- ./leg.sh", kFast));
  ASSERT_EQ(run.rc, 0) << run.out;
  json base = {{"schema", "vouch.baseline"},
               {"schema_version", 1},
               {"created_utc", "2026-11-29T10:00:00Z"},
               {"record_path", "r/record.json"},
               {"trials", 5},
               {"headline", name},
               {"clock", {{"valid", false}}},
               {"metrics",
                {{{"name", name},
                  {"value", 1.0},
                  {"unit", ""},
                  {"better", "lower"},
                  {"fail_pct", 3},
                  {"warn_pct", nullptr},
                  {"skip_env", ""}}}}};
  std::ofstream(D("b.json")) << base.dump(2);
  auto md = Vouch("gate --baseline b.json --markdown - r/record.json");
  EXPECT_EQ(md.rc, 0) << md.out;
  EXPECT_TRUE(Has(md.out, "| `@team/perf` fixes `#1` `GH-2` |")) << md.out;
  // The headline line was a code span already (inert); the table's cell is text.
  EXPECT_TRUE(Has(md.out, "Headline: `@team/perf fixes #1 GH-2`")) << md.out;
  EXPECT_FALSE(Has(md.out, "| @team")) << md.out;
}

}  // namespace
}  // namespace vouch
