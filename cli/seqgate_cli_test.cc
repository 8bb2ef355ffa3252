// The sequential gate (gate --max-reps), the baseline's second stage (baseline --max-trials)
// and the smallest change a verdict could see (mde), through the real binary on the
// simulated device. Each leg prints the next value of a file, so the truth is known.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace vouch {
namespace {

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

using testing_util::Has;
using Res = testing_util::ShellResult;

class SeqGateCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    testing_util::ScratchDirTest::SetUp();
    // Leg k prints line k of `vals` (the counter `n` is reset between runs).
    Script("leg.sh",
           "sleep 0.6\nn=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n\n"
           "v=$(sed -n \"${n}p\" vals)\n"
           "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
           "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  }
  void Values(const std::string& lines) const {
    std::ofstream(D("vals")) << lines;
    std::filesystem::remove(D("n"));
  }
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}",
                                           D(), D(), kBusy, VOUCH_BINARY, args));
  }
  int MeasuredLegs(const std::string& dir) const {
    int n = 0;
    const nlohmann::json rec = Json(dir + "/record.json");
    for (const auto& l : rec["legs"]) n += l["role"] == "measured";
    return n;
  }
};

// Five baseline trials spread about 1.2 %; the gate's first two legs cannot tell (look 1 is
// inconclusive), two more do: pass at look 2, with the MDE of the interval obtained.
TEST_F(SeqGateCli, InconclusiveFirstLookRunsAnotherBlockAndPasses) {
  Values("100\n101.5\n98.5\n100.8\n99.2\n");
  ASSERT_EQ(Vouch(fmt::format("baseline {} --trials 5 --baseline base.json -- ./leg.sh", kFast)).rc,
            0);
  const std::string gate_values = "100.9\n99.1\n100.5\n99.5\n100.2\n99.8\n100.1\n99.9\n";
  Values(gate_values);
  auto fixed = Vouch(
      fmt::format("gate {} --baseline base.json --warmup 0 --reps 2 --out f -- ./leg.sh", kFast));
  EXPECT_EQ(fixed.rc, 2) << fixed.out;  // the fixed design: inconclusive at 2 legs
  EXPECT_EQ(MeasuredLegs("f"), 2);
  EXPECT_TRUE(Has(fixed.out, "mde: tok_s: this gate could not have failed a change smaller than"))
      << fixed.out;

  Values(gate_values);
  auto seq = Vouch(fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 2 --max-reps 8 --out s -- ./leg.sh", kFast));
  EXPECT_EQ(seq.rc, 0) << seq.out;
  EXPECT_TRUE(Has(seq.out, "look 1 of 4 at 2 legs is inconclusive: 2 more legs (--max-reps 8)"))
      << seq.out;
  EXPECT_EQ(MeasuredLegs("s"), 4);
  EXPECT_TRUE(
      Has(seq.out, "at this look (2 of 4, 4 legs of at most 8; repeated confidence intervals"))
      << seq.out;
  auto g = Json("s/record.json")["extra"]["gate"];
  EXPECT_EQ(g["overall"], "pass");
  EXPECT_EQ(g["sequential"]["look"], 2);
  EXPECT_EQ(g["sequential"]["looks"], 4);
  EXPECT_EQ(g["sequential"]["legs"], 4);
  EXPECT_EQ(g["sequential"]["max_legs"], 8);
  EXPECT_DOUBLE_EQ(g["sequential"]["alpha_per_metric_all_looks"].get<double>(), 0.05);
  EXPECT_LT(g["alpha_per_metric"].get<double>(), 0.05);  // each look spends less
  const auto& row = g["rows"][0];
  EXPECT_EQ(row["verdict"], "pass");
  EXPECT_EQ(row["legs"], 4);
  const double half =
      (row["interval"]["hi_pct"].get<double>() - row["interval"]["lo_pct"].get<double>()) / 2;
  EXPECT_NEAR(row["mde_pct"].get<double>(), 3 + half, 1e-9);
  EXPECT_GT(half, 0.5);
  EXPECT_LT(half, 3.0);
  EXPECT_EQ(g["sequential"]["first_legs"], 2);
  EXPECT_EQ(g["sequential"]["legs_per_look"], 2);
  // The record's verdict asked again: the same look's level, the same verdict and interval.
  auto again = Vouch("gate --baseline base.json s");
  EXPECT_EQ(again.rc, 0) << again.out;
  EXPECT_TRUE(Has(again.out, "at this look (2 of 4, 4 legs of at most 8")) << again.out;
}

// A baseline spread too wide for any number of gate legs: the sequential gate runs to
// --max-reps and stays inconclusive (exit 2), never a false FAIL of unchanged code.
TEST_F(SeqGateCli, NoisyBaselineRunsToMaxRepsAndStaysInconclusive) {
  Values("100\n104\n96\n102\n98\n");
  ASSERT_EQ(Vouch(fmt::format("baseline {} --trials 5 --baseline base.json -- ./leg.sh", kFast)).rc,
            0);
  Values("100\n100.2\n99.8\n100.1\n99.9\n100\n");
  auto seq = Vouch(fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 2 --max-reps 5 --out s -- ./leg.sh", kFast));
  EXPECT_EQ(seq.rc, 2) << seq.out;
  EXPECT_EQ(MeasuredLegs("s"), 5);  // 2, 4, then the last look at 5
  EXPECT_TRUE(Has(seq.out, "look 2 of 3 at 4 legs is inconclusive: 1 more leg")) << seq.out;
  auto g = Json("s/record.json")["extra"]["gate"];
  EXPECT_EQ(g["overall"], "inconclusive");
  EXPECT_EQ(g["sequential"]["look"], 3);
  EXPECT_TRUE(g["rows"][0]["mde_pct"].is_number());
  // --max-reps needs legs to run: refused with a record.
  EXPECT_EQ(Vouch("gate --baseline base.json --max-reps 6 s").rc, 64);
  // The record asked again (issue 34: one verdict per record): its last look's level, so still
  // inconclusive, where one look at its 5 legs (5 % where the look spent less) could decide.
  auto again = Vouch("gate --baseline base.json s");
  EXPECT_EQ(again.rc, 2) << again.out;
  EXPECT_TRUE(Has(again.out, "at this look (3 of 3, 5 legs of at most 5")) << again.out;
  // A record whose kept design is not one, or predates the record keeping its looks: an error
  // naming the file, never a verdict at another level.
  auto rec = Json("s/record.json");
  // Judged at another level than the live gate's (a record gated before a recalibration), or
  // one that is no level: an error naming the file, exit 1.
  const nlohmann::json kept = rec;
  rec["extra"]["gate"]["sequential"]["nominal_alpha_one_sided"] = 0.0123;
  std::ofstream(D("s/record.json")) << rec.dump();
  auto moved = Vouch("gate --baseline base.json s");
  EXPECT_EQ(moved.rc, 1) << moved.out;
  EXPECT_TRUE(Has(moved.out, "s: its live gate judged its last look at the level 0.0123"))
      << moved.out;
  rec["extra"]["gate"]["sequential"]["nominal_alpha_one_sided"] = "0.05";
  std::ofstream(D("s/record.json")) << rec.dump();
  auto text = Vouch("gate --baseline base.json s");
  EXPECT_EQ(text.rc, 1) << text.out;
  EXPECT_TRUE(Has(text.out, "nominal_alpha_one_sided is not a level")) << text.out;
  rec = kept;
  rec["extra"]["gate"]["sequential"]["first_legs"] = 1e30;
  std::ofstream(D("s/record.json")) << rec.dump();
  auto bad = Vouch("gate --baseline base.json s");
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out, "s: extra.gate.sequential is not a sequential design")) << bad.out;
  rec["extra"]["gate"]["sequential"].erase("first_legs");
  rec["extra"]["gate"]["sequential"].erase("legs_per_look");
  std::ofstream(D("s/record.json")) << rec.dump();
  auto old = Vouch("gate --baseline base.json s");
  EXPECT_EQ(old.rc, 1) << old.out;
  EXPECT_TRUE(Has(old.out, "predates the record keeping its looks")) << old.out;

  // --look-every: the first look at --reps legs, then one every N.
  Values("100\n100.2\n99.8\n100.1\n99.9\n100\n");
  auto every = Vouch(fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 2 --look-every 1 --max-reps 4 --out e -- "
      "./leg.sh",
      kFast));
  EXPECT_EQ(every.rc, 2) << every.out;
  EXPECT_TRUE(Has(every.out, "look 1 of 3 at 2 legs is inconclusive: 1 more leg (--max-reps 4)"))
      << every.out;
  EXPECT_TRUE(Has(every.out, "look 2 of 3 at 3 legs is inconclusive: 1 more leg")) << every.out;
  EXPECT_EQ(MeasuredLegs("e"), 4);
  // Without --max-reps there are no looks to space: a usage error, before any leg runs.
  auto alone = Vouch(fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 2 --look-every 2 --out a -- ./leg.sh",
      kFast));
  EXPECT_EQ(alone.rc, 64) << alone.out;
  EXPECT_TRUE(Has(alone.out, "--look-every sets a sequential gate's looks: give --max-reps"))
      << alone.out;
  EXPECT_FALSE(std::filesystem::exists(D("a")));
}

// Stein's second stage: three noisy trials ask for more (at most --max-trials); three
// quiet ones do not.
TEST_F(SeqGateCli, BaselineMaxTrialsGrowsANoisyBaselineOnce) {
  Values("100\n103\n97\n101\n99\n100.5\n99.5\n");
  auto noisy = Vouch(fmt::format(
      "baseline {} --trials 3 --max-trials 6 --baseline noisy.json -- ./leg.sh", kFast));
  ASSERT_EQ(noisy.rc, 0) << noisy.out;
  EXPECT_TRUE(Has(noisy.out, "3 more trials (--max-trials 6)")) << noisy.out;
  auto nb = Json("noisy.json");
  EXPECT_EQ(nb["metrics"][0]["trials"].size(), 6u);
  EXPECT_EQ(nb["trials"], 6);

  Values("100\n100.1\n99.9\n");
  auto quiet = Vouch(fmt::format(
      "baseline {} --trials 3 --max-trials 6 --baseline quiet.json -- ./leg.sh", kFast));
  ASSERT_EQ(quiet.rc, 0) << quiet.out;
  EXPECT_FALSE(Has(quiet.out, "more trial")) << quiet.out;
  EXPECT_EQ(Json("quiet.json")["metrics"][0]["trials"].size(), 3u);
}

// An A/A whose pairs agree to 0.2 %: `no change`, said as an equivalence claim, with the
// smallest effect it could have seen (the band plus the interval's half width).
TEST_F(SeqGateCli, AbNoChangeSaysItsMdeAndItsEquivalenceClaim) {
  Values("100\n100\n100.1\n99.9\n100\n100.1\n100\n99.9\n100.1\n100\n");
  auto r = Vouch(fmt::format(
      "ab {} --a-env X=0 --b-env X=1 --pairs 4 --seed 3 --band 1 --out ab -- ./leg.sh", kFast));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "mde       this A/B could not have seen an effect smaller than")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "equivalence: the whole 95 % interval lies inside the +/- 1.000 % band "
                  "(TOST, 2.5 % a side)"))
      << r.out;
  const nlohmann::json rec = Json("ab/record.json");
  ASSERT_EQ(rec["extra"]["verdict"]["verdict"], "no change") << rec["extra"]["verdict"];
  const auto& v = rec["extra"]["verdict"]["decision"];
  const double band_log = std::log1p(0.01);
  const double half = std::log(v["ratio"]["hi"].get<double>() / v["ratio"]["lo"].get<double>()) / 2;
  EXPECT_NEAR(v["mde_pct"].get<double>(), 100 * std::expm1(band_log + half), 1e-6) << v;
  EXPECT_EQ(v["equivalence"]["holds"], true);
  EXPECT_NEAR(v["equivalence"]["alpha_one_sided"].get<double>(), 0.025, 1e-12);
  EXPECT_GE(v["equivalence"]["pairs_for_band"].get<int>(), 4);
}

}  // namespace
}  // namespace vouch
