// vouch ab through the real binary on the simulated device. The statistics themselves are
// tested against scipy in src/stats; these tests check the protocol and the refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;

class AbCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::copy_file(kBusy, D("sim.jsonl"));
    std::ofstream(D("sim.jsonl.static.json")) << R"({"control_file":"control.json"})";
    std::ofstream(D("control.json")) << "{}";
    // A leg: a short busy wait, then tok_s = SPEED x (1 +- 0.2 % noise) x SLOWFIRST penalty.
    Script("leg.sh",
           "sleep 0.6\n"
           "n=$(cat legcount 2>/dev/null | wc -l); echo x >> legcount\n"
           "pen=1; if [ -n \"$SLOWFIRST\" ] && [ $n -ge 2 ] && [ $(( (n - 2) % 4 )) -eq 0 ]; then "
           "pen=0.9; fi\n"
           "if [ -n \"$CONTROL\" ]; then echo \"$CONTROL\" > control.json; fi\n"
           "v=$(awk -v s=\"$SPEED\" -v p=$pen -v r=\"$(od -An -N2 -tu2 /dev/urandom)\" "
           "'BEGIN{printf \"%.5f\", s*p*(1+(r/65535-0.5)*0.004)}')\n"
           "echo "
           "\"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/"
           "s\\\",\\\"better\\\":\\\"higher\\\"}\" "
           ">> \"$VOUCH_METRICS\"\n");
  }
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(
        fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} ab --min-busy-readings 5 {}",
                    D(), D(), D("sim.jsonl"), VOUCH_BINARY, args));
  }
  nlohmann::json Verdict(const std::string& rel) const {
    std::ifstream in(D(rel) + "/record.json");
    return nlohmann::json::parse(in)["extra"]["verdict"];
  }
};

TEST_F(AbCli, PlantedFivePercentIsFoundInTheRightDirection) {
  auto r = Vouch(
      "--a-env SPEED=100 --b-env SPEED=105 --pairs 4 --seed 1 --band 1 --out r --markdown pr.md -- "
      "./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: B faster")) << r.out;
  auto v = Verdict("r");
  EXPECT_EQ(v["verdict"], "B faster");
  EXPECT_EQ(v["pairs_used"], 4);
  EXPECT_NEAR(v["decision"]["ratio"]["mean"].get<double>(), 1.05, 0.005);
  EXPECT_EQ(v["seed"], 1);
  EXPECT_TRUE(fs::exists(D("pr.md")));
  auto show = testing_util::Shell(fmt::format("{} show {}", VOUCH_BINARY, D("r")));
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_TRUE(Has(show.out, "A/B verdict: B faster (headline tok_s, higher is better)"))
      << show.out;
  EXPECT_TRUE(Has(show.out, "pairs 4 used, 0 refused")) << show.out;
  auto slower = Vouch(
      "--a-env SPEED=105 --b-env SPEED=100 --pairs 4 --seed 2 --band 1 --out s --fail-on slower -- "
      "./leg.sh");
  EXPECT_EQ(slower.rc, 5) << slower.out;
  EXPECT_TRUE(Has(slower.out, "B slower"));
}

// A lower-is-better headline: B's time is 1.107x A's. Every printed ratio is B/A of the time
// and says B is slower (it read "ratio B/A 0.906" before).
TEST_F(AbCli, RatiosOfALowerIsBetterHeadlineReadForwards) {
  Script("time.sh",
         "sleep 0.6\necho \"{\\\"name\\\":\\\"step_ms\\\",\\\"value\\\":$MS,\\\"unit\\\":"
         "\\\"ms\\\",\\\"better\\\":\\\"lower\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(
      "--a-env MS=100 --b-env MS=110.7 --pairs 4 --seed 1 --band 1 --out r --markdown "
      "pr.md -- ./time.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: B slower")) << r.out;
  EXPECT_TRUE(Has(r.out, "ratio     B/A time 1.1070 (95 % CI 1.1070 .. 1.1070; B slower)"))
      << r.out;
  auto v = Verdict("r");
  EXPECT_NEAR(v["decision"]["b_over_a"]["value"].get<double>(), 1.107, 1e-9);
  EXPECT_EQ(v["decision"]["b_over_a"]["reads"], "B/A time 1.1070 (B slower)");
  EXPECT_NEAR(v["decision"]["ratio"]["mean"].get<double>(), 1 / 1.107, 1e-9);  // oriented
  std::ifstream md(D("pr.md"));
  std::string mds((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(mds, "| ratio | B/A time 1.1070 (95 % CI 1.1070 .. 1.1070; B slower) |")) << mds;
  auto show = testing_util::Shell(fmt::format("{} show {}", VOUCH_BINARY, D("r")));
  EXPECT_TRUE(Has(show.out, "ratio B/A time 1.1070 (B slower) (95 % CI 1.1070 .. 1.1070)"))
      << show.out;
}

TEST_F(AbCli, AaIsNeverCalledFasterOrSlower) {
  auto r = Vouch(
      "--a-env SPEED=100 --b-env SPEED=100 --b-env SAME=1 --pairs 4 --seed 3 --band 1 --out r -- "
      "./leg.sh");
  auto v = Verdict("r");
  EXPECT_TRUE(v["verdict"] == "no change" || v["verdict"] == "inconclusive") << r.out;
  EXPECT_TRUE(r.rc == 0 || r.rc == 2);
}

TEST_F(AbCli, SlowFirstLegOfEveryBlockDoesNotBiasTheVerdict) {
  // The first leg of every block is 10 % slow, whichever arm it belongs to.
  auto r = Vouch(
      "--a-env SPEED=100 --b-env SPEED=100 --b-env X=1 --env SLOWFIRST=1 --pairs 8 --seed 11 "
      "--band 1 --out r -- ./leg.sh");
  auto v = Verdict("r");
  EXPECT_NE(v["verdict"], "B faster") << r.out;
  EXPECT_NE(v["verdict"], "B slower") << r.out;
  std::vector<std::string> o = v["orientations"];
  EXPECT_EQ(o.size(), 4u);
}

TEST_F(AbCli, CrossBootPairsAreRefusedUnlessWaived) {
  // Arm B "reboots" the simulated machine at every leg: each of its windows has a new boot id.
  std::string args =
      "--a-env SPEED=100 --a-env 'CONTROL={\"boot_id\":\"boot-a\"}' --b-env SPEED=105 "
      "--b-env 'CONTROL={\"boot_id\":\"boot-b\"}' --pairs 4 --seed 5 --band 1";
  auto r = Vouch(args + " --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 3) << r.out;
  auto v = Verdict("r");
  EXPECT_EQ(v["verdict"], "refused");
  EXPECT_EQ(v["pairs_used"], 0);
  EXPECT_TRUE(Has(v["refused_pairs"].dump(), "boot id")) << v.dump(2);
  auto w = Vouch(args + " --allow-cross-boot --out w -- ./leg.sh");
  EXPECT_EQ(w.rc, 0) << w.out;
  EXPECT_EQ(Verdict("w")["verdict"], "B faster");
  EXPECT_TRUE(Has(w.out, "caveat")) << w.out;
}

TEST_F(AbCli, TwoPercentClockOffsetBetweenArmsIsRefused) {
  auto r = Vouch(
      "--a-env SPEED=100 --a-env 'CONTROL={\"sm_offset_mhz\":0}' --b-env SPEED=105 "
      "--b-env 'CONTROL={\"sm_offset_mhz\":-40}' --pairs 4 --seed 6 --band 1 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 3) << r.out;
  auto v = Verdict("r");
  EXPECT_EQ(v["verdict"], "refused");
  EXPECT_TRUE(Has(v["refused_pairs"].dump(), "SM clock")) << v.dump(2);
}

TEST_F(AbCli, OneArtifactOrOneArmIsRefusedBeforeAnyLeg) {
  std::ofstream(D("a.bin")) << "same";
  std::ofstream(D("b.bin")) << "same";
  auto r = Vouch(
      "--a ./leg.sh --b ./leg.sh --env SPEED=1 --artifact-a a.bin --artifact-b b.bin --out r");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "one artifact")) << r.out;
  EXPECT_FALSE(fs::exists(D("r/record.json")));
  auto same = Vouch("--a-env SPEED=1 --b-env SPEED=1 --out s -- ./leg.sh");
  EXPECT_EQ(same.rc, 3) << same.out;
  EXPECT_TRUE(Has(same.out, "one arm"));
  auto usage = Vouch("--a ./leg.sh --out u -- ./leg.sh");
  EXPECT_EQ(usage.rc, 64) << usage.out;
}

TEST_F(AbCli, CalibratedBandComesFromAaPairs) {
  auto r = Vouch(
      "--a-env SPEED=100 --b-env SPEED=110 --calibrate 4 --pairs 4 --seed 4 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto v = Verdict("r");
  EXPECT_EQ(v["decision"]["band_source"], "calibrated");
  // A/A pairs at +-0.2 % noise give a band far below the 10 % effect.
  EXPECT_LT(v["decision"]["band_pct"].get<double>(), 1.0);
  EXPECT_GT(v["decision"]["band_pct"].get<double>(), 0.0);
  EXPECT_EQ(v["verdict"], "B faster");
  EXPECT_TRUE(Has(r.out, "calibrated from 4 A/A pairs")) << r.out;
}

TEST_F(AbCli, SequentialModeStopsEarlyOnAClearEffect) {
  auto r = Vouch(
      "--a-env SPEED=100 --b-env SPEED=110 --max-pairs 16 --seed 9 --band 1 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto v = Verdict("r");
  EXPECT_EQ(v["verdict"], "B faster");
  EXPECT_EQ(v["mode"], "sequential");
  EXPECT_LT(v["pairs_used"].get<int>(), 16)
      << "a 10 % effect at 0.2 % noise must stop at an early look";
  // The legs planned are the most it may run: its ETA says so.
  EXPECT_TRUE(Has(r.out, "(run ETA at most ")) << r.out;
  // Stopping early is how the design completes, not a failure.
  std::ifstream in(D("r/record.json"));
  auto rec = nlohmann::json::parse(in);
  EXPECT_EQ(rec["status"], "complete") << rec["missing"].dump();
  EXPECT_TRUE(rec["missing"].empty());
  EXPECT_EQ(rec["planned_legs"].get<size_t>(), rec["legs"].size());
  EXPECT_NE(rec["extra"]["stopped_early"].get<std::string>().find("planned legs were not needed"),
            std::string::npos);
  // The clock-normalised interval is at the look's corrected level, as the verdict's is.
  const double level = v["decision"]["ratio"]["confidence"].get<double>();
  EXPECT_GT(level, 0.95);
  EXPECT_EQ(v["clock_normalised"]["ratio"]["confidence"].get<double>(), level) << v.dump();
  const std::string ci = fmt::format("({:.0f} % CI ", 100 * level);
  const auto ratio_line = r.out.find("  ratio     B/A ");
  const auto clock_line = r.out.find("  clock-normalised B/A ");
  ASSERT_NE(ratio_line, std::string::npos) << r.out;
  ASSERT_NE(clock_line, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(ratio_line, r.out.find('\n', ratio_line) - ratio_line).find(ci),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.substr(clock_line, r.out.find('\n', clock_line) - clock_line).find(ci),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace vouch
