// One window per GPU: every GPU a leg uses gets its own fold and verdict, an idle GPU is named,
// and pairing compares GPU with GPU (matched by UUID). Folds come from the real H200 fixture.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "clock/window.h"

namespace vouch {
namespace {

Fold FixtureFold(double from, double to, int gpu) {
  auto all = ReadSampleStream(VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl");
  EXPECT_TRUE(all.ok());
  std::vector<Sample> part;
  for (const auto& s : *all)
    if (s.t_s >= from && s.t_s < to) part.push_back(s);
  Fold f = FoldWindow(part, Policy{});
  f.gpu = gpu;
  return f;
}

// The copy loop (valid on its own), the idle stretch, and the matrix products (spread 52 %).
Fold Copy(int gpu) { return FixtureFold(23.0, 29.2, gpu); }
Fold Idle(int gpu) { return FixtureFold(16.8, 22.7, gpu); }
Fold Matrix(int gpu) { return FixtureFold(8.6, 15.2, gpu); }

GpuWindow Gpu(int index, Fold f, bool named) {
  GpuWindow g;
  g.state.index = index;
  g.state.uuid = "GPU-" + std::to_string(index);
  g.state.driver_version = "580.159.04";
  g.state.max_sm_mhz = 1980;
  g.state.app_sm_mhz = 1980;
  g.state.persistence = true;
  g.fold = std::move(f);
  g.named = named;
  return g;
}

WindowSummary Window(std::vector<GpuWindow> gpus, const std::string& source = "") {
  WindowSummary w;
  w.boot_id = "boot-1";
  w.gpus = std::move(gpus);
  w.gpu_source = source;
  w.verdict = JudgeWindow(w);
  return w;
}

TEST(MultiGpu, FoldsOfTheFixtureAreWhatTheTestsAssume) {
  EXPECT_EQ(JudgeWindow({Gpu(0, Copy(0), true)}, Policy{}).status, WindowStatus::kValid);
  EXPECT_EQ(Idle(0).busy_readings, 0);
  EXPECT_GE(Idle(0).readings, 50);
  EXPECT_EQ(JudgeWindow({Gpu(0, Matrix(0), true)}, Policy{}).status, WindowStatus::kInvalid);
}

TEST(MultiGpu, EachGpuHasItsOwnVerdict) {
  auto w = Window({Gpu(0, Copy(0), true), Gpu(1, Matrix(1), true)}, "--gpu 0,1");
  EXPECT_EQ(w.verdict.status, WindowStatus::kInvalid);
  ASSERT_EQ(w.verdict.gpus.size(), 2u);
  EXPECT_EQ(w.verdict.gpus[0].gpu, 0);
  EXPECT_EQ(w.verdict.gpus[0].status, "valid");
  EXPECT_TRUE(w.verdict.gpus[0].reasons.empty());
  EXPECT_EQ(w.verdict.gpus[1].status, "invalid");
  ASSERT_EQ(w.verdict.reasons.size(), 1u);
  EXPECT_EQ(w.verdict.reasons[0].rfind("GPU 1: SM clock spread", 0), 0u) << w.verdict.reasons[0];
  auto both = Window({Gpu(0, Copy(0), true), Gpu(1, Copy(1), true)});
  EXPECT_EQ(both.verdict.status, WindowStatus::kValid);
  EXPECT_EQ(both.verdict.gpus[1].status, "valid");
}

TEST(MultiGpu, ANamedGpuThatSatIdleMakesTheWindowInvalidAndIsNamed) {
  auto w = Window({Gpu(0, Copy(0), true), Gpu(1, Idle(1), true)}, "CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_EQ(w.verdict.status, WindowStatus::kInvalid);
  EXPECT_EQ(w.verdict.gpus[0].status, "valid");
  EXPECT_EQ(w.verdict.gpus[1].status, "idle");
  ASSERT_EQ(w.verdict.reasons.size(), 1u);
  const std::string& r = w.verdict.reasons[0];
  EXPECT_EQ(r.rfind("GPU 1 sat idle for the whole window", 0), 0u) << r;
  EXPECT_NE(r.find("although CUDA_VISIBLE_DEVICES=0,1 names it"), std::string::npos) << r;
  EXPECT_EQ(w.verdict.gpus[1].reasons, w.verdict.reasons);
  // The same, the other way round: which GPU is idle is what the reason says.
  auto v = Window({Gpu(0, Idle(0), true), Gpu(1, Copy(1), true)}, "--gpu 0,1");
  EXPECT_EQ(v.verdict.reasons.at(0).rfind("GPU 0 sat idle", 0), 0u);
  EXPECT_EQ(v.verdict.gpus[0].status, "idle");
}

TEST(MultiGpu, AnUnnamedIdleGpuIsUnusedNotJudged) {
  auto w = Window({Gpu(0, Idle(0), false), Gpu(1, Copy(1), false)}, "all GPUs (none named)");
  EXPECT_EQ(w.verdict.status, WindowStatus::kValid);
  EXPECT_EQ(w.verdict.gpus[0].status, "unused");
  EXPECT_EQ(w.verdict.gpus[1].status, "valid");
  ASSERT_FALSE(w.verdict.notes.empty());
  EXPECT_EQ(w.verdict.notes[0].rfind("GPU 0 sat idle throughout", 0), 0u) << w.verdict.notes[0];
  // The render says so per GPU.
  std::string text = RenderWindowText(w);
  EXPECT_NE(text.find("GPU 0  (GPU-0): unused (idle, not named: not judged)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU 1  (GPU-1): valid"), std::string::npos) << text;
}

TEST(MultiGpu, AllIdleIsAnIdleWindowThatNamesEachGpu) {
  auto w = Window({Gpu(0, Idle(0), false), Gpu(1, Idle(1), false)});
  EXPECT_EQ(w.verdict.status, WindowStatus::kIdle);
  ASSERT_EQ(w.verdict.reasons.size(), 2u);
  EXPECT_EQ(w.verdict.reasons[0].rfind("GPU 0: no busy reading", 0), 0u);
  EXPECT_EQ(w.verdict.reasons[1].rfind("GPU 1: no busy reading", 0), 0u);
  EXPECT_EQ(w.verdict.gpus[1].status, "idle");
}

TEST(MultiGpu, PerGpuVerdictsAndSelectionRoundTripThroughJson) {
  auto w = Window({Gpu(0, Idle(0), true), Gpu(1, Copy(1), true)}, "--gpu 0,1");
  auto back = WindowSummaryFromJson(ToJson(w), "test");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpu_source, "--gpu 0,1");
  EXPECT_TRUE(back->gpus[0].named);
  ASSERT_EQ(back->verdict.gpus.size(), 2u);
  EXPECT_EQ(back->verdict.gpus[0].status, "idle");
  EXPECT_EQ(back->verdict.gpus[1].status, "valid");
  // Re-judging what was read gives the same verdict (clock check does this).
  auto again = JudgeWindow(*back);
  EXPECT_EQ(again.status, WindowStatus::kInvalid);
  EXPECT_EQ(again.reasons, w.verdict.reasons);
}

TEST(MultiGpu, PacingClockIsTheSlowestBusyGpu) {
  Fold slow = Copy(1);
  slow.sm_mhz->mean -= 40;
  slow.sm_mhz->median -= 40;
  auto w = Window({Gpu(0, Copy(0), true), Gpu(1, slow, true)});
  EXPECT_DOUBLE_EQ(*PacingClockMean(w), Copy(0).sm_mhz->mean - 40);
  EXPECT_DOUBLE_EQ(*PacingClockMedian(w), 1940);
  auto idle_one = Window({Gpu(0, Idle(0), false), Gpu(1, Copy(1), false)});
  EXPECT_DOUBLE_EQ(*PacingClockMedian(idle_one), 1980);  // the idle GPU does not pace
  EXPECT_FALSE(PacingClockMean(Window({Gpu(0, Idle(0), false)})).has_value());
}

const PairRule* Rule(const PairVerdict& v, const std::string& name) {
  for (const auto& r : v.rules)
    if (r.rule.rfind(name, 0) == 0) return &r;
  return nullptr;
}

TEST(MultiGpu, PairingComparesGpuWithGpuMatchedByUuid) {
  auto a = Window({Gpu(0, Copy(0), true), Gpu(1, Copy(1), true)});
  auto b = Window({Gpu(1, Copy(1), true), Gpu(0, Copy(0), true)});  // listed the other way
  auto v = PairWindows(a, b, Policy{}, false);
  EXPECT_TRUE(v.paired);
  ASSERT_NE(Rule(v, "GPU 0: SM clock median offset"), nullptr);
  ASSERT_NE(Rule(v, "GPU 1: SM clock mean offset"), nullptr);
  EXPECT_TRUE(Rule(v, "the same GPUs (UUIDs)")->pass);
}

TEST(MultiGpu, OneGpuTwoPercentSlowerRefusesThePairAndSaysWhichGpu) {
  Fold slow = Copy(1);
  slow.sm_mhz->mean *= 0.98;
  slow.sm_mhz->median *= 0.98;
  auto a = Window({Gpu(0, Copy(0), true), Gpu(1, Copy(1), true)});
  auto b = Window({Gpu(0, Copy(0), true), Gpu(1, slow, true)});
  auto v = PairWindows(a, b, Policy{}, false);
  EXPECT_FALSE(v.paired);
  EXPECT_TRUE(Rule(v, "GPU 0: SM clock median offset")->pass);
  EXPECT_TRUE(Rule(v, "GPU 0: SM clock mean offset")->pass);
  EXPECT_FALSE(Rule(v, "GPU 1: SM clock median offset")->pass);
  EXPECT_FALSE(Rule(v, "GPU 1: SM clock mean offset")->pass);
}

TEST(MultiGpu, DifferentGpusOrAGpuUsedOnlyOnOneSideDoNotPair) {
  auto a = Window({Gpu(0, Copy(0), true), Gpu(1, Copy(1), true)});
  auto other = Window({Gpu(0, Copy(0), true), Gpu(2, Copy(2), true)});
  auto v = PairWindows(a, other, Policy{}, false);
  EXPECT_FALSE(v.paired);
  const PairRule* r = Rule(v, "the same GPUs (UUIDs)");
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(r->a, "GPU-0,GPU-1");
  EXPECT_EQ(r->b, "GPU-0,GPU-2");
  auto fewer = Window({Gpu(0, Copy(0), true)});
  EXPECT_FALSE(PairWindows(a, fewer, Policy{}, false).paired);

  // Unnamed GPUs: GPU 0 idle in both is not compared on its clock; idle on one side only is.
  auto u1 = Window({Gpu(0, Idle(0), false), Gpu(1, Copy(1), false)});
  auto u2 = Window({Gpu(0, Idle(0), false), Gpu(1, Copy(1), false)});
  auto pu = PairWindows(u1, u2, Policy{}, false);
  EXPECT_TRUE(pu.paired);
  EXPECT_TRUE(Rule(pu, "GPU 0: used in either window")->pass);
  auto u3 = Window({Gpu(0, Copy(0), false), Gpu(1, Copy(1), false)});
  auto pv = PairWindows(u1, u3, Policy{}, false);
  EXPECT_FALSE(pv.paired);
  const PairRule* used = Rule(pv, "GPU 0: used in both windows");
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->a, "idle throughout");
  EXPECT_EQ(used->b.rfind("busy (", 0), 0u);
}

}  // namespace
}  // namespace vouch
