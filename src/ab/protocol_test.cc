#include "ab/protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <set>

namespace vouch {
namespace {

// A leg runner that fabricates legs: one GPU (or two) busy at a flat clock, the headline
// `tok_s` (higher is better) at the arm's speed times optional seeded noise.
struct FakeLegs {
  std::map<std::string, double> speed = {{"A", 100}, {"A'", 100}, {"B", 100}};
  std::map<std::string, double> clock_mhz;       // per arm; default 1980
  std::map<std::string, double> second_gpu_mhz;  // per arm: a second busy GPU at this clock
  double noise = 0;                              // relative, uniform in +-noise
  std::mt19937_64 rng{42};
  std::set<int> invalid;  // leg indices made invalid
  int stop_at = -1;       // this leg index returns no leg
  Better better = Better::kHigher;
  bool extra_metrics = true;   // built-in vouch.* and a text metric
  std::deque<LegRecord> legs;  // stable addresses
  int calls = 0;

  static GpuWindow Gpu(int index, double mhz, double mean_mhz) {
    GpuWindow g;
    g.state.index = index;
    g.state.uuid = "GPU-" + std::to_string(index);
    g.state.driver_version = "580.0";
    g.state.max_sm_mhz = 1980;
    g.state.app_sm_mhz = 1980;
    g.state.persistence = true;
    g.fold.gpu = index;
    g.fold.polls = 400;
    g.fold.readings = 40;
    g.fold.busy_readings = 40;
    g.fold.busy_fraction = 1;
    g.fold.sm_mhz = ClockStats{mean_mhz, mhz, mhz, mean_mhz};
    g.fold.spread = 0;
    return g;
  }

  LegStep operator()(const Arm& arm, const std::string& role) {
    int index = calls++;
    if (index == stop_at) return {};
    LegRecord l;
    l.index = index;
    l.arm = arm.name;
    l.role = role;
    l.window.boot_id = "boot-1";
    double mhz = clock_mhz.count(arm.name) ? clock_mhz[arm.name] : 1980;
    l.window.gpus.push_back(Gpu(0, mhz, mhz));
    if (second_gpu_mhz.count(arm.name)) {
      double m2 = second_gpu_mhz[arm.name];
      l.window.gpus.push_back(Gpu(1, m2, m2 - 1));  // a mean 1 MHz below its median
    }
    l.window.verdict.status = WindowStatus::kValid;
    double u = std::uniform_real_distribution<double>(-1, 1)(rng);
    Metric m;
    m.name = "tok_s";
    m.value = speed[arm.name] * (1 + noise * u);
    m.better = better;
    l.metrics.push_back(m);
    if (extra_metrics) {
      Metric wall;
      wall.name = "vouch.wall_s";
      wall.value = 1;
      wall.better = Better::kLower;
      l.metrics.push_back(wall);
      Metric text;
      text.name = "checksum";
      text.text = "abc";
      l.metrics.push_back(text);
    }
    l.valid = true;
    if (invalid.count(index)) {
      l.valid = false;
      l.reasons = {"window invalid: SM clock spread 9 % > 5 %"};
      l.window.verdict.status = WindowStatus::kInvalid;
    }
    legs.push_back(std::move(l));
    return {&legs.back(), false};
  }
};

AbPlan Plan(int pairs = 8, std::uint64_t seed = 1) {
  AbPlan p;
  p.a.name = "A";
  p.a.argv = {"./bench"};
  p.a.env = {{"SPEED", "100"}};
  p.b.name = "B";
  p.b.argv = {"./bench"};
  p.b.env = {{"SPEED", "105"}};
  p.pairs = pairs;
  p.seed = seed;
  p.band = *NoiseBandFromPercent(1.0);
  p.headline = "tok_s";
  return p;
}

AbOutcome RunFake(const AbPlan& plan, FakeLegs& legs, const LookObserver& look = {}) {
  return RunAbProtocol(
      plan, [&](const Arm& a, const std::string& r) { return legs(a, r); }, look);
}

// The orientations the old cmd_ab.cc drew: one mt19937_64 draw per block, low bit 0 = ABBA.
std::vector<std::string> OldOrientations(std::uint64_t seed, int blocks) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> o;
  for (int i = 0; i < blocks; ++i) o.push_back((rng() & 1) == 0 ? "ABBA" : "BAAB");
  return o;
}

double Log(double x) { return std::log(x); }

TEST(AbProtocol, OrientationsFollowTheSeedAsBefore) {
  for (std::uint64_t seed : {1ull, 2ull, 11ull, 20261129ull}) {
    FakeLegs legs;
    AbPlan plan = Plan(16, seed);
    plan.calibrate = 4;  // calibration blocks draw first, from the same generator
    auto out = RunFake(plan, legs);
    ASSERT_EQ(out.end, AbOutcome::End::kCompleted);
    auto want = OldOrientations(seed, 2 + 8);
    EXPECT_EQ(out.orientations, want) << "seed " << seed;
    // The legs ran in that order: warm-ups A then B, then each block's four legs.
    ASSERT_EQ(out.legs.size(), 2u + 4u * 10u);
    EXPECT_EQ(out.legs[0].arm, "A");
    EXPECT_EQ(out.legs[0].role, "warmup");
    EXPECT_EQ(out.legs[1].arm, "B");
    for (size_t blk = 0; blk < want.size(); ++blk) {
      bool cal = blk < 2;
      std::string x = "A", y = cal ? "A'" : "B";
      std::vector<std::string> order = want[blk] == "ABBA" ? std::vector<std::string>{x, y, y, x}
                                                           : std::vector<std::string>{y, x, x, y};
      for (size_t k = 0; k < 4; ++k) {
        const auto& l = out.legs[2 + 4 * blk + k];
        EXPECT_EQ(l.arm, order[k]) << "seed " << seed << " block " << blk;
        EXPECT_EQ(l.role, cal ? "calibration" : "measured");
      }
    }
  }
  // Pinned: the blocks the old binary printed for seeds 1 and 9 ("blocks ABBA ABBA",
  // "blocks BAAB ABBA" in the verdict block of `vouch ab --seed 1|9`).
  FakeLegs legs;
  auto out = RunFake(Plan(4, 1), legs);
  EXPECT_EQ(out.orientations, (std::vector<std::string>{"ABBA", "ABBA"}));
  FakeLegs legs9;
  EXPECT_EQ(RunFake(Plan(4, 9), legs9).orientations, (std::vector<std::string>{"BAAB", "ABBA"}));
  EXPECT_EQ(AbPlannedLegs(Plan(8, 1)), 18);
}

TEST(AbProtocol, PairsTakeAFromALegsInBothOrientations) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.01;
  auto out = RunFake(Plan(16, 7), legs);
  std::set<std::string> seen(out.orientations.begin(), out.orientations.end());
  ASSERT_EQ(seen.size(), 2u) << "seed 7 must give both ABBA and BAAB blocks";
  ASSERT_EQ(out.pairs.size(), 16u);
  for (size_t i = 0; i < out.pairs.size(); ++i) {
    const auto& p = out.pairs[i];
    ASSERT_TRUE(p.valid) << p.reason;
    EXPECT_EQ(out.legs[static_cast<size_t>(p.a_leg)].arm, "A");
    EXPECT_EQ(out.legs[static_cast<size_t>(p.b_leg)].arm, "B");
    EXPECT_EQ(p.a, FindMetric(out.legs[static_cast<size_t>(p.a_leg)].metrics, "tok_s")->value);
    EXPECT_EQ(p.b, FindMetric(out.legs[static_cast<size_t>(p.b_leg)].metrics, "tok_s")->value);
    // The two pairs of a block: legs (0,1) and (3,2) of ABBA, (1,0) and (2,3) of BAAB.
    int first = 2 + 4 * static_cast<int>(i / 2);
    bool abba = out.orientations[i / 2] == "ABBA";
    if (i % 2 == 0) {
      EXPECT_EQ(p.a_leg, abba ? first : first + 1);
      EXPECT_EQ(p.b_leg, abba ? first + 1 : first);
    } else {
      EXPECT_EQ(p.a_leg, abba ? first + 3 : first + 2);
      EXPECT_EQ(p.b_leg, abba ? first + 2 : first + 3);
    }
    EXPECT_NEAR(p.a, 100, 1.0 + 1e-9);
    EXPECT_NEAR(p.b, 105, 1.05 + 1e-9);
  }
}

TEST(AbProtocol, PlantedFivePercentIsBFaster) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  auto out = RunFake(Plan(8, 3), legs);
  EXPECT_TRUE(out.completed());
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);
  EXPECT_EQ(out.pairs_used, 8u);
  EXPECT_TRUE(out.refused.empty());
  ASSERT_TRUE(out.decision.interval);
  EXPECT_NEAR(out.decision.interval->Ratio(), 1.05, 0.003);
  EXPECT_EQ(out.headline, "tok_s");
  EXPECT_EQ(out.better, Better::kHigher);
  // Same clock on both arms: the clock explains nothing, the normalised ratio is the same.
  ASSERT_TRUE(out.comparison.clock_explained_log);
  EXPECT_DOUBLE_EQ(*out.comparison.clock_explained_log, 0.0);
  EXPECT_NEAR(out.comparison.clock_normalised.interval->Ratio(), out.decision.interval->Ratio(),
              1e-12);
  EXPECT_DOUBLE_EQ(out.clock_a.median_mhz, 1980);
  EXPECT_DOUBLE_EQ(out.clock_b.mean_mhz, 1980);

  // The reports carry the same numbers.
  AbPlan plan = Plan(8, 3);
  auto v = AbVerdictJson(plan, out, {"simulated device"});
  EXPECT_EQ(v["verdict"], "B faster");
  EXPECT_EQ(v["pairs_used"], 8);
  EXPECT_EQ(v["seed"], 3);
  EXPECT_EQ(v["mode"], "fixed");
  EXPECT_EQ(v["orientations"].size(), 4u);
  EXPECT_DOUBLE_EQ(v["decision"]["ratio"]["mean"].get<double>(), out.decision.interval->Ratio());
  EXPECT_DOUBLE_EQ(v["sm_clock"]["A"]["mean_mhz"].get<double>(), 1980);
  EXPECT_EQ(v["caveats"][0], "simulated device");
  EXPECT_FALSE(v.contains("sequential"));
  AbReportContext ctx;
  ctx.simulated = true;
  ctx.a_env = {"SPEED=100"};
  ctx.caveats = {"simulated device"};
  std::string text = RenderAbText(plan, out, ctx);
  EXPECT_EQ(text.rfind("A/B verdict: B faster\n  (SIMULATED DEVICE: clocks are a replay)\n"
                       "  headline  tok_s (higher is better; given with --headline)\n"
                       "  arms      A = A: ./bench [SPEED=100]\n            B = B: ./bench\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("  pairs     8 used, 0 refused (fixed mode, seed 3, blocks "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("SM clock  A median 1980 mean 1980.0 MHz; B median 1980 mean 1980.0 MHz\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  caveat: simulated device\n"), std::string::npos);
  std::string md = RenderAbMarkdown(out, {});
  EXPECT_EQ(md.rfind("### vouch A/B: **B faster**\n", 0), 0u) << md;
  EXPECT_NE(md.find("| pairs | 8 used, 0 refused |"), std::string::npos) << md;
  EXPECT_NE(md.find("| SM clock A / B (mean) | 1980.0 / 1980.0 MHz |"), std::string::npos) << md;
}

TEST(AbProtocol, AaIsNoChange) {
  FakeLegs legs;
  legs.noise = 0.002;
  AbPlan plan = Plan(8, 5);
  plan.b.env = {{"SPEED", "100"}, {"SAME", "1"}};
  auto out = RunFake(plan, legs);
  EXPECT_EQ(out.decision.verdict, AbVerdict::kNoChange);
  EXPECT_EQ(out.pairs_used, 8u);
  EXPECT_NEAR(out.decision.interval->Ratio(), 1.0, 0.003);
}

TEST(AbProtocol, AnInvalidLegRefusesItsPairAndNamesBothLegs) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  legs.invalid = {7};  // the second measured block's second leg
  auto out = RunFake(Plan(8, 3), legs);
  ASSERT_EQ(out.pairs.size(), 8u);
  EXPECT_EQ(out.pairs_used, 7u);
  ASSERT_EQ(out.refused.size(), 1u);
  const AbPairResult* bad = nullptr;
  for (const auto& p : out.pairs)
    if (p.a_leg == 7 || p.b_leg == 7) bad = &p;
  ASSERT_NE(bad, nullptr);
  EXPECT_FALSE(bad->valid);
  std::string side = bad->a_leg == 7 ? "A" : "B";
  EXPECT_EQ(bad->reason,
            fmt::format("pair of legs {} and {}: leg 8 ({}) invalid: window invalid: SM clock "
                        "spread 9 % > 5 %",
                        bad->a_leg + 1, bad->b_leg + 1, side));  // legs counted from 1
  EXPECT_EQ(out.refused[0], bad->reason);
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);
  // The refusal is carried into the decision's reasons.
  bool carried = false;
  for (const auto& r : out.decision.reasons) carried |= r.find(bad->reason) != std::string::npos;
  EXPECT_TRUE(carried);
  // The invalid leg is not in its arm's clock.
  EXPECT_DOUBLE_EQ(out.clock_a.mean_mhz, 1980);
}

TEST(AbProtocol, ArmOnATwoPercentSlowerClockIsRefused) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  legs.clock_mhz = {{"B", 1980 * 0.98}};
  auto out = RunFake(Plan(8, 3), legs);
  ASSERT_EQ(out.pairs.size(), 8u);
  EXPECT_EQ(out.pairs_used, 0u);
  EXPECT_EQ(out.refused.size(), 8u);
  for (const auto& p : out.pairs) {
    EXPECT_FALSE(p.valid);
    EXPECT_NE(p.reason.find("pairing rule 'SM clock median offset <= 1"), std::string::npos)
        << p.reason;
    EXPECT_NE(p.reason.find("pairing rule 'SM clock mean offset <= 1"), std::string::npos)
        << p.reason;
  }
  EXPECT_EQ(out.decision.verdict, AbVerdict::kRefused);
  EXPECT_NEAR(out.clock_b.mean_mhz, 1940.4, 1e-9);
  EXPECT_EQ(AbVerdictJson(Plan(8, 3), out, {})["verdict"], "refused");
}

TEST(AbProtocol, CalibrationGivesTheBand) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"A'", 100}, {"B", 110}};
  legs.noise = 0.002;
  AbPlan plan = Plan(4, 4);
  plan.calibrate = 4;
  plan.band = {};  // not used when calibrating
  auto out = RunFake(plan, legs);
  ASSERT_TRUE(out.completed()) << out.error;
  ASSERT_EQ(out.calibration.size(), 4u);
  std::vector<double> aa;
  for (const auto& p : out.calibration) {
    ASSERT_TRUE(p.valid) << p.reason;
    EXPECT_EQ(out.legs[static_cast<size_t>(p.a_leg)].arm, "A");
    EXPECT_EQ(out.legs[static_cast<size_t>(p.b_leg)].arm, "A'");
    aa.push_back(std::log(p.b / p.a));
  }
  EXPECT_EQ(out.band.source, NoiseBand::Source::kCalibrated);
  EXPECT_EQ(out.band.calibration_pairs, 4u);
  EXPECT_NEAR(out.band.half_width_log, NoiseBandFromCalibration(aa)->half_width_log, 1e-15);
  EXPECT_GT(out.band.Percent(), 0.0);
  EXPECT_LT(out.band.Percent(), 0.5);
  EXPECT_EQ(out.decision.band.source, NoiseBand::Source::kCalibrated);
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);
  EXPECT_EQ(out.orientations.size(), 4u);  // two A/A blocks, two measured
  EXPECT_EQ(AbPlannedLegs(plan), 2 + 8 + 8);
  AbReportContext ctx;
  EXPECT_NE(RenderAbText(plan, out, ctx).find("calibrated from 4 A/A pairs"), std::string::npos);
}

TEST(AbProtocol, TooFewValidAaPairsIsACalibrationFailure) {
  FakeLegs legs;
  legs.invalid = {2, 6};  // one leg in each A/A block: two pairs of four left
  AbPlan plan = Plan(4, 4);
  plan.calibrate = 4;
  auto out = RunFake(plan, legs);
  EXPECT_EQ(out.end, AbOutcome::End::kCalibrationFailed);
  EXPECT_FALSE(out.has_verdict());
  EXPECT_EQ(out.error, "calibration gave 2 valid A/A pairs of 4: too few for a band");
  EXPECT_EQ(out.legs.size(), 2u + 8u) << "no measured leg after a failed calibration";
  EXPECT_TRUE(out.pairs.empty());
}

TEST(AbProtocol, SequentialModeStopsEarlyOnAClearEffect) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 110}};
  legs.noise = 0.002;
  AbPlan plan = Plan(8, 9);
  plan.max_pairs = 16;
  std::vector<std::pair<size_t, size_t>> looks;
  auto out =
      RunFake(plan, legs, [&](size_t look, size_t pairs, const std::optional<SequentialStep>& s) {
        looks.push_back({look, pairs});
        EXPECT_TRUE(s.has_value());
      });
  EXPECT_TRUE(out.completed());
  EXPECT_TRUE(out.sequential);
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);
  EXPECT_LT(out.pairs.size(), 16u);
  EXPECT_EQ(out.legs.size(), 2 + 2 * out.pairs.size());
  ASSERT_FALSE(looks.empty());
  EXPECT_EQ(looks.front(), (std::pair<size_t, size_t>{1, 4}));
  EXPECT_EQ(looks.back().second, out.pairs.size());
  EXPECT_EQ(out.looks, looks.size());
  ASSERT_TRUE(out.last_step);
  EXPECT_TRUE(out.last_step->stop);
  EXPECT_LT(out.last_step->nominal_confidence, 1.0);
  EXPECT_GT(out.last_step->nominal_confidence, 0.95);
  EXPECT_EQ(AbPlannedLegs(plan), 2 + 4 * 8);
  auto v = AbVerdictJson(plan, out, {});
  EXPECT_EQ(v["mode"], "sequential");
  EXPECT_EQ(v["sequential"]["looks"], out.looks);
  EXPECT_EQ(RenderLookLine(1, 4, out.last_step), "look 1 after 4 pairs: B faster\n");
  EXPECT_EQ(RenderLookLine(2, 6, std::nullopt), "look 2 after 6 pairs: n/a\n");
}

TEST(AbProtocol, ARunnerThatStopsEndsTheProtocol) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  legs.stop_at = 10;  // the first leg of the third measured block
  auto out = RunFake(Plan(8, 3), legs);
  EXPECT_EQ(out.end, AbOutcome::End::kStopped);
  EXPECT_FALSE(out.completed());
  EXPECT_TRUE(out.has_verdict());
  EXPECT_EQ(legs.calls, 11) << "no leg after the runner said stop";
  EXPECT_EQ(out.legs.size(), 10u);
  EXPECT_EQ(out.pairs.size(), 4u);
  EXPECT_EQ(out.orientations.size(), 3u);  // the third block was drawn before it stopped
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);

  // A leg that was recorded but stops the run still counts in its arm's clock, unjudged.
  int n = 0;
  auto out2 = RunAbProtocol(Plan(8, 3), [&](const Arm& a, const std::string& r) {
    LegStep s = legs(a, r);
    s.stop = ++n == 3;
    return s;
  });
  EXPECT_EQ(out2.end, AbOutcome::End::kStopped);
  EXPECT_EQ(out2.legs.size(), 3u);
  EXPECT_TRUE(out2.pairs.empty());
  EXPECT_EQ(out2.decision.verdict, AbVerdict::kRefused);
  bool measured = out2.legs[2].role == "measured";
  EXPECT_TRUE(measured);
  EXPECT_DOUBLE_EQ(out2.legs[2].arm == "A" ? out2.clock_a.mean_mhz : out2.clock_b.mean_mhz, 1980);
}

TEST(AbProtocol, HeadlineIsTheOnlyUserMetricAndNeedsADirection) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  AbPlan plan = Plan(4, 3);
  plan.headline = "";
  auto out = RunFake(plan, legs);
  EXPECT_EQ(out.headline, "tok_s") << "vouch.* and text metrics are not candidates";
  EXPECT_EQ(out.decision.verdict, AbVerdict::kBFaster);

  FakeLegs none;
  none.better = Better::kNone;
  none.speed = {{"A", 100}, {"B", 105}};
  none.noise = 0.002;
  auto refused = RunFake(plan, none);
  EXPECT_EQ(refused.headline, "tok_s");
  EXPECT_EQ(refused.better, Better::kNone);
  EXPECT_EQ(refused.decision.verdict, AbVerdict::kRefused);
  bool said = false;
  for (const auto& r : refused.decision.reasons)
    said |= r == "metric 'tok_s' has no direction (higher or lower is better)";
  EXPECT_TRUE(said);
  EXPECT_EQ(AbVerdictJson(plan, refused, {})["better"], "none");

  // Two user metrics: none is guessed, every pair is refused for the missing name.
  FakeLegs two;
  AbPlan p2 = plan;
  auto runner = [&](const Arm& a, const std::string& r) {
    LegStep s = two(a, r);
    Metric m;
    m.name = "latency_ms";
    m.value = 1;
    m.better = Better::kLower;
    two.legs.back().metrics.push_back(m);
    return s;
  };
  auto ambiguous = RunAbProtocol(p2, runner);
  EXPECT_EQ(ambiguous.headline, "");
  EXPECT_EQ(ambiguous.decision.verdict, AbVerdict::kRefused);
  EXPECT_EQ(ambiguous.pairs_used, 0u);
  said = false;
  for (const auto& r : ambiguous.decision.reasons)
    said |= r == "no headline metric: give --headline NAME (and --metric)";
  EXPECT_TRUE(said);
}

// A leg that exited 0 shows at once whether the verdict can have a headline: the protocol
// stops after it rather than run every leg for a refusal.
TEST(AbProtocol, AHeadlineTheFirstLegCannotGiveStopsTheRunThere) {
  FakeLegs two;
  auto runner = [&](const Arm& a, const std::string& r) {
    LegStep s = two(a, r);
    two.legs.back().result.exit_code = 0;
    Metric m;
    m.name = "latency_ms";
    m.value = 1;
    m.better = Better::kLower;
    two.legs.back().metrics.push_back(m);
    return s;
  };
  AbPlan plan = Plan(4, 3);
  plan.headline = "";
  auto ambiguous = RunAbProtocol(plan, runner);
  EXPECT_EQ(ambiguous.end, AbOutcome::End::kHeadlineRefused);
  EXPECT_EQ(ambiguous.legs.size(), 1u);
  EXPECT_EQ(ambiguous.error,
            "leg 1 (A warmup) reported tok_s, latency_ms (2 user metrics), and the verdict is "
            "about one: give --headline NAME (one of tok_s, latency_ms)");

  two.calls = 0;
  plan.headline = "tokens";
  auto missing = RunAbProtocol(plan, runner);
  EXPECT_EQ(missing.end, AbOutcome::End::kHeadlineRefused);
  EXPECT_EQ(missing.legs.size(), 1u);
  EXPECT_EQ(missing.error,
            "leg 1 (A warmup) has no metric 'tokens' (--headline); it reported tok_s, latency_ms "
            "(2 user metrics): give --headline with one of them");

  // Arm B's first leg is checked too; a given headline both report runs to the end.
  two.calls = 0;
  plan.headline = "latency_ms";
  auto fine = RunAbProtocol(plan, runner);
  EXPECT_EQ(fine.end, AbOutcome::End::kCompleted);
  EXPECT_EQ(fine.legs.size(), 10u);
}

TEST(AbProtocol, TwoGpusArePacedByTheSlowerGpusMeanClock) {
  FakeLegs legs;
  legs.speed = {{"A", 100}, {"B", 105}};
  legs.noise = 0.002;
  legs.clock_mhz = {{"A", 1980}, {"B", 1980}};
  legs.second_gpu_mhz = {{"A", 1960}, {"B", 1950}};  // 0.5 % apart: still paired
  auto out = RunFake(Plan(8, 3), legs);
  ASSERT_EQ(out.pairs_used, 8u) << (out.refused.empty() ? "" : out.refused[0]);
  // The pairs carry the slower GPU's mean (its median is 1 MHz higher).
  for (const auto& p : out.pairs) {
    EXPECT_DOUBLE_EQ(p.clock_a, 1959);
    EXPECT_DOUBLE_EQ(p.clock_b, 1949);
  }
  EXPECT_DOUBLE_EQ(out.clock_a.mean_mhz, 1959);
  EXPECT_DOUBLE_EQ(out.clock_a.median_mhz, 1960);
  EXPECT_DOUBLE_EQ(out.clock_b.mean_mhz, 1949);
  EXPECT_DOUBLE_EQ(out.clock_b.median_mhz, 1950);
  ASSERT_TRUE(out.comparison.clock_explained_log);
  EXPECT_NEAR(*out.comparison.clock_explained_log, Log(1949.0 / 1959.0), 1e-12);
  // Every pair's normalised d is its d less ln(1949/1959): the means differ by exactly that.
  ASSERT_TRUE(out.comparison.plain.interval && out.comparison.clock_normalised.interval);
  EXPECT_NEAR(
      out.comparison.clock_normalised.interval->mean_log - out.comparison.plain.interval->mean_log,
      -Log(1949.0 / 1959.0), 1e-12);
  EXPECT_NEAR(out.comparison.clock_normalised.interval->Ratio(),
              out.decision.interval->Ratio() * 1959.0 / 1949.0, 1e-9);
}

}  // namespace
}  // namespace vouch
