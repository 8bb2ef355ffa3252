// One record, one verdict (issue 34): over seeded records of every kind, the verdict a live
// `vouch ab` computes (the protocol's legs as they run, then FinishAb) equals the one its
// record gives back (the plan and legs written as JSON, read again, replayed: `ab --from`),
// with the same exit code, and the record's JSON says the same; a refused verdict has no
// direction word in its text, its Markdown or its JSON.
#include "verdict/ab.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "record/leg_json.h"
#include "record/leg_runner.h"
#include "verdict/ab_record.h"

namespace vouch::verdict {
namespace {

enum class Kind { kAa, kAaModes, kBSlower, kModesApart, kTooFewPairs, kOneArm, kSequential };

struct Legs {
  Kind kind;
  std::mt19937_64 rng;
  std::deque<LegRecord> legs;
  int calls = 0;

  LegStep operator()(const Arm& arm, const std::string& role) {
    LegRecord l;
    l.index = calls++;
    l.arm = arm.name;
    l.role = role;
    l.window.boot_id = "boot-1";
    GpuWindow g;
    g.state.uuid = "GPU-0";
    g.state.driver_version = "580.0";
    g.state.max_sm_mhz = g.state.app_sm_mhz = 1980;
    g.fold.polls = 400;
    g.fold.readings = g.fold.busy_readings = 40;
    g.fold.busy_fraction = 1;
    g.fold.sm_mhz = ClockStats{1980, 1980, 1980, 1980};
    l.window.gpus.push_back(g);
    l.window.verdict.status = WindowStatus::kValid;
    std::normal_distribution<double> noise(0, 0.02);
    double speed = 100;
    const bool is_b = arm.name == "B";
    switch (kind) {
      case Kind::kAaModes:
        speed = std::bernoulli_distribution(0.5)(rng) ? 100 : 120;
        break;
      case Kind::kBSlower:
      case Kind::kSequential:
        speed = is_b ? 95 : 100;
        break;
      case Kind::kModesApart:
        speed = is_b ? 70 : (std::bernoulli_distribution(0.5)(rng) ? 100 : 120);
        break;
      default:
        break;
    }
    Metric m;
    m.name = "tok_s";
    m.unit = "tok/s";
    m.better = Better::kHigher;
    m.value = speed * std::exp(kind == Kind::kModesApart || kind == Kind::kAaModes ? noise(rng) / 4
                                                                                   : noise(rng));
    l.metrics.push_back(m);
    l.valid = true;
    const bool drop = (kind == Kind::kTooFewPairs && l.index > 4) ||
                      (kind == Kind::kOneArm && is_b && role == "measured");
    if (drop) {
      l.valid = false;
      l.reasons = {"window invalid: SM clock spread 9 % > 5 %"};
      l.window.verdict.status = WindowStatus::kInvalid;
    }
    legs.push_back(std::move(l));
    return {&legs.back(), false};
  }
};

AbPlan PlanFor(Kind kind, std::uint64_t seed) {
  AbPlan p;
  p.a = {"A", {"./bench"}, {{"SPEED", "100"}}, "", false};
  p.b = {"B", {"./bench"}, {{"SPEED", "95"}}, "", false};
  p.pairs = 8;
  if (kind == Kind::kSequential) p.max_pairs = 32;
  p.seed = seed;
  p.band = *NoiseBandFromPercent(1.0);
  p.headline = "tok_s";
  return p;
}

bool HasDirection(const std::string& s) {
  return s.find("B faster") != std::string::npos || s.find("B slower") != std::string::npos;
}

TEST(OneVerdict, LiveAndRecordAgreeOnEveryKindOfRecord) {
  int refused = 0, by_rank = 0, directed = 0, runs = 0;
  for (Kind kind : {Kind::kAa, Kind::kAaModes, Kind::kBSlower, Kind::kModesApart,
                    Kind::kTooFewPairs, Kind::kOneArm, Kind::kSequential})
    for (std::uint64_t seed = 1; seed <= 8; ++seed)
      for (bool allow_modes : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind) << " seed " << seed
                                          << " allow_modes " << allow_modes);
        ++runs;
        const AbPlan plan = PlanFor(kind, seed);
        const AbRules rules{false, allow_modes};
        // Live.
        Legs fake{kind, std::mt19937_64(seed * 7919 + static_cast<int>(kind)), {}, 0};
        AbOutcome live =
            RunAbProtocol(plan, [&](const Arm& a, const std::string& r) { return fake(a, r); });
        ASSERT_TRUE(live.has_verdict());
        AbFinal lf = FinishAb(plan, live, rules, {});
        // The record: the plan and the legs as JSON, read back and replayed.
        nlohmann::json rec = {{"kind", "ab"},
                              {"policy", ToJson(plan.policy)},
                              {"extra", {{"ab_plan", AbPlanJson(plan, rules, {}, {})}}}};
        auto recorded = AbPlanFromRecord(rec, "record.json");
        ASSERT_TRUE(recorded) << recorded.error().message;
        std::vector<LegRecord> back;
        for (const auto& l : live.legs) {
          auto r = LegRecordFromJson(ToJson(l), "leg");
          ASSERT_TRUE(r) << r.error().message;
          back.push_back(*r);
        }
        std::size_t next = 0;
        AbOutcome again = RunAbProtocol(recorded->plan, [&](const Arm&, const std::string&) {
          return next < back.size() ? LegStep{&back[next++], false} : LegStep{};
        });
        AbFinal af = FinishAb(recorded->plan, again, recorded->rules, {});
        EXPECT_EQ(live.decision.verdict, again.decision.verdict);
        EXPECT_EQ(AbExitCode(live.decision.verdict, true),
                  AbExitCode(again.decision.verdict, true));
        EXPECT_EQ(lf.verdict["verdict"], af.verdict["verdict"]);
        EXPECT_EQ(lf.verdict["verdict"], std::string(ToString(live.decision.verdict)));
        EXPECT_EQ(lf.verdict["decided_by"], af.verdict["decided_by"]);
        const std::string text = RenderAbText(plan, live, {}) + RenderAbMarkdown(live, {});
        if (live.decision.verdict == AbVerdict::kRefused) {
          ++refused;
          EXPECT_FALSE(HasDirection(text)) << text;
          EXPECT_FALSE(HasDirection(lf.verdict.dump())) << lf.verdict.dump(2);
          EXPECT_EQ(lf.verdict["clock_normalised"]["verdict"], "refused");
        } else if (live.decision.verdict == AbVerdict::kBFaster ||
                   live.decision.verdict == AbVerdict::kBSlower) {
          ++directed;
        }
        by_rank += lf.modes.by_rank;
        // The kinds' truths: an A/A with modes never gets a direction unless modes are
        // allowed; arms apart despite modes are B slower by rank.
        if (kind == Kind::kAaModes && !allow_modes && lf.modes.any()) {
          EXPECT_FALSE(live.decision.verdict == AbVerdict::kBFaster ||
                       live.decision.verdict == AbVerdict::kBSlower);
        }
        if (kind == Kind::kModesApart && !allow_modes && lf.modes.any()) {
          EXPECT_TRUE(lf.modes.by_rank);
          EXPECT_EQ(live.decision.verdict, AbVerdict::kBSlower);
        }
        if (kind == Kind::kTooFewPairs || kind == Kind::kOneArm) {
          EXPECT_EQ(live.decision.verdict, AbVerdict::kRefused);
        }
      }
  EXPECT_EQ(runs, 7 * 8 * 2);
  // Every branch was taken: refusals, rank verdicts and directed verdicts.
  EXPECT_GT(refused, 24);
  EXPECT_GT(by_rank, 0);
  EXPECT_GT(directed, 12);
}

}  // namespace
}  // namespace vouch::verdict
