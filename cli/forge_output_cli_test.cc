// Output that cannot be hijacked and records without secrets (issue 21, classes 7 and 8),
// through the real binary: a metric, a lock holder or a command line written by someone else
// is shown by the terminal and by Markdown, never obeyed, and a password given in a URL, a
// header or a Go-style flag never lands in a file vouch writes.
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
constexpr const char* kFast = "--min-busy-readings 5";

// A metric named to draw a heading in a pull request comment and close a code span and a
// cell; as JSON on the metrics channel. (A name holding a control character, an OSC 52
// clipboard write or a colour, is refused since issue 36: kControlJson below.)
constexpr const char* kHostileJson = R"(<h1>gate: PASS</h1><img src=x>`|)";
// How a terminal shows it: the markup as it is.
constexpr const char* kHostileText = R"(<h1>gate: PASS</h1><img src=x>`|)";
// How Markdown shows it: no tag, no code span, no cell boundary.
constexpr const char* kHostileMarkdown =
    R"(&lt;h1&gt;gate: PASS&lt;/h1&gt;&lt;img src=x&gt;&#96;\|)";
// A name with controls: refused naming the leg and shown escaped, never obeyed.
constexpr const char* kControlJson = R"(\u001b]52;c;ZXZpbA==\u0007\u001b[32mok\u001b[0m)";
constexpr const char* kControlText = R"(\x1b]52;c;ZXZpbA==\x07\x1b[32mok\x1b[0m)";

class ForgeOutputCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 60) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  // Every file under REL, concatenated.
  std::string AllFiles(const std::string& rel) const {
    std::string all;
    for (const auto& e : fs::recursive_directory_iterator(D(rel)))
      if (e.is_regular_file()) {
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        all += ss.str();
      }
    return all;
  }
};

TEST_F(ForgeOutputCli, AHostileMetricNameIsShownEscapedInTextAndMarkdownNeverRaw) {
  Script("leg.sh",
         fmt::format("sleep 0.8\nprintf '%s\\n' '{{\"name\":\"{}\",\"value\":100,"
                     "\"unit\":\"tok/s\",\"better\":\"higher\"}}' >> \"$VOUCH_METRICS\"\n",
                     kHostileJson));
  auto run = Vouch(fmt::format("run {} --warmup 0 --reps 2 --out r -- ./leg.sh", kFast));
  ASSERT_EQ(run.rc, 0) << run.out;
  EXPECT_FALSE(Has(run.out, "\x1b")) << run.out;
  EXPECT_TRUE(Has(run.out, kHostileText)) << run.out;

  Script("ctl.sh", fmt::format("sleep 0.8\nprintf '%s\\n' '{{\"name\":\"{}\",\"value\":1}}' >> "
                               "\"$VOUCH_METRICS\"\n",
                               kControlJson));
  auto ctl = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out c -- ./ctl.sh", kFast));
  EXPECT_EQ(ctl.rc, 1) << ctl.out;
  EXPECT_FALSE(Has(ctl.out, "\x1b")) << ctl.out;
  EXPECT_TRUE(Has(ctl.out, fmt::format("metrics.jsonl:1: metric '{}' is refused: it holds a "
                                       "control character (U+001B)",
                                       kControlText)))
      << ctl.out;

  // A baseline that gates the metric by that name: its row is in the table.
  nlohmann::json base = {{"schema", "vouch.baseline"},
                         {"schema_version", 1},
                         {"created_utc", "2026-11-29T10:00:00Z"},
                         {"record_path", "r/record.json"},
                         {"trials", 5},
                         {"headline", nlohmann::json::parse(fmt::format("\"{}\"", kHostileJson))},
                         {"clock", {{"valid", false}}},
                         {"metrics",
                          {{{"name", nlohmann::json::parse(fmt::format("\"{}\"", kHostileJson))},
                            {"value", 100.0},
                            {"unit", "tok/s"},
                            {"better", "higher"},
                            {"fail_pct", 3},
                            {"warn_pct", nullptr},
                            {"skip_env", ""}}}}};
  std::ofstream(D("b.json")) << base.dump(2);

  auto text = Vouch("gate --baseline b.json r/record.json");
  EXPECT_EQ(text.rc, 0) << text.out;
  EXPECT_FALSE(Has(text.out, "\x1b")) << text.out;
  EXPECT_TRUE(Has(text.out, std::string(kHostileText) + "  tok/s")) << text.out;

  auto md = Vouch("gate --baseline b.json --markdown - r/record.json");
  EXPECT_EQ(md.rc, 0) << md.out;
  EXPECT_FALSE(Has(md.out, "\x1b")) << md.out;
  // Markup only inside the headline's code span (where it is text), fenced past its backtick.
  EXPECT_TRUE(Has(md.out, R"(Headline: ``<h1>gate: PASS</h1><img src=x>`\|`` ()")) << md.out;
  EXPECT_EQ(md.out.find("<h1>"), md.out.rfind("<h1>")) << md.out;
  EXPECT_TRUE(Has(md.out, std::string("| ") + kHostileMarkdown + " | tok/s |")) << md.out;
  EXPECT_FALSE(fs::exists(D("-")));  // "-" is stdout, not a file named "-"
  // The same escape in the file for the pull request.
  auto file = Vouch("gate --baseline b.json --markdown pr.md r/record.json");
  EXPECT_EQ(file.rc, 0) << file.out;
  std::ifstream in(D("pr.md"));
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_TRUE(Has(ss.str(), std::string("| ") + kHostileMarkdown + " | tok/s |")) << ss.str();
  EXPECT_FALSE(Has(ss.str(), "\x1b")) << ss.str();
}

TEST_F(ForgeOutputCli, LockStatusShowsAnotherUsersControlCodesAsText) {
  std::ofstream(D("held.lock"))
      << R"({"pid": 1, "start_unix_s": 1700000000, "host": "\u001b]0;pwned\u0007node1",)"
      << R"( "command": "bench\u001b[2J\u001b[32m OK\r\nlock free"})";
  auto st = testing_util::Shell(
      fmt::format("cd {} && {} --lock-file held.lock lock status", D(), VOUCH_BINARY));
  EXPECT_EQ(st.rc, 0) << st.out;
  EXPECT_FALSE(Has(st.out, "\x1b")) << st.out;
  EXPECT_FALSE(Has(st.out, "\r")) << st.out;
  EXPECT_TRUE(Has(st.out, R"(on \x1b]0;pwned\x07node1 since)")) << st.out;
  EXPECT_TRUE(Has(st.out, R"(: bench\x1b[2J\x1b[32m OK\x0d\x0alock free)")) << st.out;
}

TEST_F(ForgeOutputCli, PasswordsInUrlsHeadersAndGoFlagsNeverReachTheRecord) {
  Script("leg.sh",
         "sleep 0.8\necho '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\","
         "\"better\":\"higher\"}' >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --store 'postgresql://u:PGPASS1@127.0.0.1:1/db' "
      "--env DATABASE_URL=postgres://app:ENVPASS2@db.internal/app "
      "-- ./leg.sh -H 'Authorization: Bearer HDRTOK3' -token GOTOK4 "
      "--url=https://bot:URLPASS5@git.example/x.git",
      kFast));
  // The store cannot be reached (port 1): exit 1, and the run itself is kept.
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "history store postgresql://u:<redacted>@127.0.0.1:1/db: ")) << r.out;
  ASSERT_TRUE(fs::exists(D("r/record.json"))) << r.out;
  const std::string all = AllFiles("r");
  for (const char* secret : {"PGPASS1", "ENVPASS2", "HDRTOK3", "GOTOK4", "URLPASS5"}) {
    EXPECT_FALSE(Has(all, secret)) << secret << " is in a file under r/";
    EXPECT_FALSE(Has(r.out, secret)) << secret << " was printed:\n" << r.out;
  }
  auto rec = Json("r/record.json");
  const std::string reproduce = rec["recipe"]["reproduce"];
  EXPECT_TRUE(Has(reproduce, "--store 'postgresql://u:<redacted>@127.0.0.1:1/db'")) << reproduce;
  EXPECT_TRUE(Has(reproduce, "DATABASE_URL=postgres://app:<redacted>@db.internal/app"))
      << reproduce;
  EXPECT_TRUE(Has(reproduce, "'Authorization: Bearer <redacted>' -token '<redacted>'"))
      << reproduce;
  EXPECT_TRUE(Has(reproduce, "--url=https://bot:<redacted>@git.example/x.git")) << reproduce;
  EXPECT_EQ(rec["recipe"]["reproduce_note"],
            "5 secret values were redacted as <redacted>: put them back to reproduce");
  EXPECT_EQ(rec["recipe"]["arms"][0]["env"]["DATABASE_URL"],
            "postgres://app:<redacted>@db.internal/app");
}

}  // namespace
}  // namespace vouch
