// vouch bisect through the real binary on the simulated device, over a real git repository
// built here: a leg whose speed a committed file sets, a commit that does not build, a commit
// whose benchmark crashes, the regression planted, and an interruption resumed from the record.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
using testing_util::Has;

class BisectCli : public testing_util::ScratchDirTest {
 protected:
  // Commits 0..8 of repo/: speed 100 up to 6, 95 from 7 on (the planted 5 % regression);
  // commit 4 does not build; commit 5's benchmark crashes. Returns the shas.
  std::vector<std::string> MakeRepo() {
    const std::string repo = D("repo");
    fs::create_directories(repo);
    auto git = [&](const std::string& a) {
      auto r = testing_util::Shell(fmt::format(
          "cd {} && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
          "GIT_COMMITTER_EMAIL=t@t git -c init.defaultBranch=main -c commit.gpgsign=false {}",
          repo, a));
      EXPECT_EQ(r.rc, 0) << a << "\n" << r.out;
      return r.out;
    };
    git("init -q");
    // The leg: a short busy wait on the simulated GPU, then tok_s = speed x (1 +- 0.2 %). It
    // counts its runs in $LEG_COUNT and, when $STOP_AT is that count, interrupts vouch once.
    std::ofstream(repo + "/leg.sh")
        << "#!/bin/sh\n"
           "sleep 0.6\n"
           "echo x >> \"$LEG_COUNT\"; n=$(wc -l < \"$LEG_COUNT\")\n"
           "if [ -f \"$STOP_FILE\" ] && [ \"$n\" -ge \"$(cat \"$STOP_FILE\")\" ]; then rm -f "
           "\"$STOP_FILE\"; kill -INT $PPID; fi\n"
           "if [ -f crash ]; then echo 'segfault (simulated)' >&2; exit 139; fi\n"
           "v=$(awk -v s=\"$(cat speed.txt)\" -v r=\"$(od -An -N2 -tu2 /dev/urandom)\" "
           "'BEGIN{printf \"%.5f\", s*(1+(r/65535-0.5)*0.004)}')\n"
           "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
           "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n";
    fs::permissions(repo + "/leg.sh", fs::perms::owner_all);
    std::ofstream(repo + "/build.sh")
        << "test ! -f broken || { echo 'error: broken' >&2; exit 3; }\n";
    std::vector<std::string> shas;
    for (int i = 0; i <= 8; ++i) {
      std::ofstream(repo + "/speed.txt") << (i >= 7 ? 95 : 100) << "\n";
      std::ofstream(repo + "/notes.txt") << "commit " << i << "\n";
      fs::remove(repo + "/broken");
      fs::remove(repo + "/crash");
      if (i == 4) std::ofstream(repo + "/broken") << "x\n";
      if (i == 5) std::ofstream(repo + "/crash") << "x\n";
      git("add -A");
      git(fmt::format("commit -q -m 'commit {}{}'", i, i == 7 ? ": slow path" : ""));
      shas.push_back(
          std::string(testing_util::Shell("cd " + repo + " && git rev-parse HEAD").out, 0, 40));
    }
    git("tag good " + shas[0]);
    return shas;
  }
  testing_util::ShellResult Bisect(const std::string& extra) const {
    return VouchOnSim(
        kBusy,
        fmt::format("bisect --git-repo repo --good good --bad main --build 'sh build.sh' "
                    "--min-busy-readings 5 --seed 1 --out bis --env LEG_COUNT={} "
                    "--env STOP_FILE={} {} -- ./leg.sh",
                    D("legcount"), D("stop"), extra),
        240);
  }
};

TEST_F(BisectCli, FindsThePlantedRegressionSkipsBrokenCommitsAndResumesAfterAnInterruption) {
  auto shas = MakeRepo();
  // Interrupt vouch at the 13th leg: the confirmation took 10 (2 warm-ups, 4 pairs), commit 4
  // did not build, so the leg falls in the A/B of commit 3.
  std::ofstream(D("stop")) << "13\n";
  auto first = Bisect("");
  EXPECT_EQ(first.rc, 130) << first.out;
  EXPECT_TRUE(Has(first.out, "run the same command again to resume")) << first.out;
  auto rec = Json("bis/bisect.json");
  EXPECT_EQ(rec["status"], "interrupted");
  ASSERT_EQ(rec["steps"].size(), 2u) << rec.dump(1);
  EXPECT_EQ(rec["steps"][0]["kind"], "confirm");
  EXPECT_EQ(rec["steps"][0]["verdict"], "like bad");
  EXPECT_EQ(rec["steps"][1]["commit"], shas[4]);
  EXPECT_EQ(rec["steps"][1]["verdict"], "skipped");
  EXPECT_TRUE(Has(rec["steps"][1]["reason"], "the build failed (exited with status 3"))
      << rec["steps"][1];

  const auto legs_before = testing_util::Shell("wc -l < " + D("legcount")).out;
  auto second = Bisect("--markdown pr.md");
  ASSERT_EQ(second.rc, 0) << second.out;
  EXPECT_TRUE(Has(second.out, "resuming from")) << second.out;
  EXPECT_TRUE(Has(second.out, "2 step(s) done")) << second.out;
  EXPECT_TRUE(
      Has(second.out, "first bad commit: " + shas[7].substr(0, 12) + " (commit 7: slow path)"))
      << second.out;
  rec = Json("bis/bisect.json");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["result"]["first_bad"]["commit"], shas[7]);
  // confirm 8, 4 skipped (build), 3 like good, 5 skipped (benchmark crashed), 6 like good,
  // 7 like bad.
  std::vector<std::pair<int, std::string>> want = {{8, "like bad"},  {4, "skipped"},
                                                   {3, "like good"}, {5, "skipped"},
                                                   {6, "like good"}, {7, "like bad"}};
  ASSERT_EQ(rec["steps"].size(), want.size()) << rec["steps"].dump(1);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(rec["steps"][k]["commit"], shas[want[k].first]) << k;
    EXPECT_EQ(rec["steps"][k]["verdict"], want[k].second) << k << rec["steps"][k].dump();
  }
  EXPECT_TRUE(Has(rec["steps"][3]["reason"], "its benchmark failed")) << rec["steps"][3];
  // The family: 8 candidates, 3 halvings + the confirmation, each at 0.05 / 4.
  EXPECT_EQ(rec["plan"]["planned_decisions"], 4);
  EXPECT_DOUBLE_EQ(rec["plan"]["per_step_alpha"].get<double>(), 0.0125);
  EXPECT_DOUBLE_EQ(rec["result"]["family_error_bound"].get<double>(), 0.05);
  // Each decided step is a vouch A/B record at the step's level, B/A near 0.95 or 1.
  const auto& conf = rec["steps"][0]["evidence"]["ab"];
  EXPECT_EQ(conf["verdict"], "B slower");
  EXPECT_NEAR(conf["ratio"].get<double>(), 0.95, 0.005);
  EXPECT_GE(conf["confidence"].get<double>(), 0.9875 - 1e-9);
  const auto& last = rec["steps"][5]["evidence"]["ab"];
  EXPECT_EQ(last["verdict"], "B slower");
  EXPECT_NEAR(last["band_pct"].get<double>(), 2.5, 0.3) << "half the confirmed regression";
  auto step_rec =
      Json("bis/" + rec["steps"][5]["evidence"]["dir"].get<std::string>() + "/record.json");
  EXPECT_EQ(step_rec["kind"], "ab");
  EXPECT_EQ(step_rec["extra"]["verdict"]["verdict"], "B slower");
  // The confirmation was not run again: the resumed run started at commit 3.
  EXPECT_TRUE(Has(second.out, "SIMULATED DEVICE")) << second.out;
  std::ifstream md(D("pr.md"));
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(text, "### vouch bisect: first bad commit: " + shas[7].substr(0, 12))) << text;
  EXPECT_TRUE(Has(text, "| skipped | its benchmark failed: ")) << text;
  EXPECT_TRUE(fs::exists(D("bis/bisect.md")));
  EXPECT_FALSE(fs::exists(D("bis/worktrees/" + shas[0].substr(0, 12)))) << "worktrees removed";
  auto wt = testing_util::Shell("cd " + D("repo") + " && git worktree list | wc -l");
  EXPECT_EQ(wt.out, "1\n") << wt.out;
}

TEST_F(BisectCli, BadRangesAreRefusedBeforeAnyLeg) {
  auto shas = MakeRepo();
  auto r = VouchOnSim(kBusy, "bisect --git-repo repo --good nosuch --bad main -- ./leg.sh", 30);
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "'nosuch' is not a commit of")) << r.out;
  r = VouchOnSim(kBusy, "bisect --git-repo repo --good main --bad good -- ./leg.sh", 30);
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "is not after --good")) << r.out;
  r = VouchOnSim(kBusy, "bisect --git-repo repo --good good --bad main", 30);
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "no benchmark")) << r.out;
  r = VouchOnSim(kBusy, "bisect --git-repo " + D() + "/nope --good good --bad main -- ./leg.sh",
                 30);
  EXPECT_EQ(r.rc, 64) << r.out;
  // Another range in an existing record's folder is refused, not mixed.
  fs::create_directories(D("bis"));
  std::ofstream(D("bis/bisect.json")) << "{\"schema\": 3}";
  r = VouchOnSim(kBusy, "bisect --git-repo repo --good good --bad main --out bis -- ./leg.sh", 30);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "bisect.json: 'schema' must be a string")) << r.out;
  EXPECT_FALSE(fs::exists(D("legcount")));
}

}  // namespace
}  // namespace vouch
