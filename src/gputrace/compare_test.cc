#include "gputrace/compare.h"

#include <gtest/gtest.h>

namespace vouch::gputrace {
namespace {

// One leg with a range 'step': MULTISET per instance, each kernel NS long, over 100 instances.
LegGpuTrace Leg(const KernelMultiset& ms, double ns_each, double active_ns, double modal = 1.0) {
  LegGpuTrace g;
  RangeFigures r;
  r.name = "step";
  r.instances = 100;
  r.median_ns = active_ns;
  r.modal = ms;
  r.modal_fraction = modal;
  for (const auto& [k, n] : ms)
    r.per_instance[k] = {static_cast<double>(n), ns_each * static_cast<double>(n)};
  g.ranges.push_back(r);
  for (const auto& [k, n] : ms)
    g.by_kernel[k] = {n * 100, static_cast<std::int64_t>(ns_each * n * 100)};
  return g;
}

const KernelMultiset kA = {{"gemv", 16}, {"silu", 16}};
const KernelMultiset kB = {{"gemv", 17}, {"silu", 16}, {"mul", 1}};

TEST(GpuCompare, EqualMultisetsAreIdentity) {
  auto c = CompareArms({Leg(kA, 10000, 200000), Leg(kA, 10100, 201000)},
                       {Leg(kA, 10050, 200500), Leg(kA, 9990, 199000)}, "", "A", "B");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->identity, Identity::kIdentity);
  EXPECT_EQ(c->basis, "per instance of NVTX range 'step'");
  EXPECT_NE(c->summary.find("identity: arms A and B ran the same kernels, 32 kernels of 2 names"),
            std::string::npos)
      << c->summary;
  for (const auto& r : c->rows) EXPECT_EQ(r.status, "same");
  EXPECT_EQ(c->call_stats_a.at("gemv").calls, 16);
  EXPECT_EQ(c->call_stats_b.at("gemv").calls, 16);
}

TEST(GpuCompare, ADifferentMultisetIsAControlThatMoved) {
  auto c = CompareArms({Leg(kA, 10000, 200000), Leg(kA, 10000, 200000)},
                       {Leg(kB, 10000, 212000), Leg(kB, 10000, 212000)}, "step", "A", "B");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->identity, Identity::kMoved);
  EXPECT_EQ(c->moved, (std::vector<std::string>{"gemv: 16 -> 17", "mul: 0 -> 1"}));
  EXPECT_NE(c->summary.find("behavioural control moved"), std::string::npos);
  ASSERT_EQ(c->rows.size(), 3u);
  // Kernel time per instance: A 320 us, B 340 us; gemv +10 us and mul +10 us, half each.
  EXPECT_DOUBLE_EQ(c->a_kernel_ns, 320000);
  EXPECT_DOUBLE_EQ(c->b_kernel_ns, 340000);
  EXPECT_EQ(c->rows[0].status, "moved");
  EXPECT_EQ(c->rows[0].name, "gemv");
  EXPECT_DOUBLE_EQ(*c->rows[0].share_pct, 50);
  EXPECT_EQ(c->rows[1].status, "added");
  EXPECT_EQ(c->rows[1].name, "mul");
  EXPECT_DOUBLE_EQ(*c->rows[1].share_pct, 50);
  EXPECT_EQ(c->rows[2].status, "same");
  EXPECT_DOUBLE_EQ(c->a_active_ns, 200000);
  EXPECT_DOUBLE_EQ(c->b_active_ns, 212000);
  // Swapped: a removed kernel.
  auto back = CompareArms({Leg(kB, 10000, 1)}, {Leg(kA, 10000, 1)}, "", "A", "B");
  ASSERT_TRUE(back.ok());
  bool removed = false;
  for (const auto& r : back->rows) removed = removed || (r.name == "mul" && r.status == "removed");
  EXPECT_TRUE(removed);
  std::string text = RenderComparisonText(*c, "clock window: legs of run X (A: valid 2 of 2)");
  EXPECT_NE(text.find("GPU: behavioural control moved"), std::string::npos) << text;
  EXPECT_NE(text.find("clock window: legs of run X"), std::string::npos);
  EXPECT_NE(text.find("added"), std::string::npos);
  EXPECT_NE(text.find("50.0%"), std::string::npos) << text;
  std::string md = RenderComparisonMarkdown(*c, "unattributed");
  EXPECT_NE(md.find("| moved | 16 | 17 | 160.0 us | 170.0 us | +10.0 us | 50.0 % | `gemv` |"),
            std::string::npos)
      << md;
  auto j = ToJson(*c);
  EXPECT_EQ(j["identity"], "moved");
  EXPECT_EQ(j["kernels"][0]["delta_ns"], 10000.0);
}

TEST(GpuCompare, LegsThatDisagreeAreNotJudged) {
  auto c = CompareArms({Leg(kA, 10000, 1), Leg(kB, 10000, 1)}, {Leg(kA, 10000, 1)}, "", "A", "B");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->identity, Identity::kUnknown);
  ASSERT_FALSE(c->notes.empty());
  EXPECT_NE(c->notes[0].find("arm A: its legs ran different kernel multisets per 'step' instance"),
            std::string::npos)
      << c->notes[0];
  // A mixture inside one leg is noted too.
  auto m = CompareArms({Leg(kA, 10000, 1, 0.3)}, {Leg(kA, 10000, 1)}, "", "A", "B");
  ASSERT_TRUE(m.ok());
  EXPECT_NE(m->notes.at(0).find("only 30 % of the 'step' instances"), std::string::npos);
}

TEST(GpuCompare, RegionBasisWithoutRanges) {
  LegGpuTrace a, b;
  a.by_kernel = {{"k", {10, 1000}}};
  a.active_ns = 1000;
  b.by_kernel = {{"k", {10, 1100}}};
  b.active_ns = 1100;
  auto c = CompareArms({a}, {b}, "", "base", "new");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->basis, "per measured region");
  EXPECT_EQ(c->identity, Identity::kIdentity);
  EXPECT_NE(c->summary.find("arms base and new"), std::string::npos);
  auto none = CompareArms({}, {b}, "", "base", "new");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no GPU trace for arm base"), std::string::npos);
  auto missing = CompareArms({a}, {b}, "step", "base", "new");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("NVTX range 'step' (the headline's) is missing"),
            std::string::npos);
}

TEST(GpuCompare, RangeOfMetric) {
  std::vector<LegGpuTrace> legs = {Leg(kA, 1, 1)};
  legs[0].ranges[0].name = "decode step";
  EXPECT_EQ(RangeOfMetric("gpu.active_ns_per.decode_step", legs), "decode step");
  EXPECT_EQ(RangeOfMetric("gpu.active_ns_per.decode_step.spread_pct", legs), "decode step");
  EXPECT_EQ(RangeOfMetric("gpu.kernels_per.decode_step", legs), "decode step");
  EXPECT_EQ(RangeOfMetric("gpu.active_ns", legs), "");
  EXPECT_EQ(RangeOfMetric("tok_s", legs), "");
}

// Legs whose instances ran two mixes (gemv 10 times, or not at all) show each mix's integer
// count with its share of the instances, never the mean (5.50 of a kernel).
LegGpuTrace MixedLeg(std::int64_t with, std::int64_t without) {
  LegGpuTrace g;
  RangeFigures r;
  r.name = "step";
  r.instances = with + without;
  r.median_ns = 100000;
  const KernelMultiset gemv = {{"gemv", 10}}, none = {};
  r.modal = with >= without ? gemv : none;
  r.modal_fraction =
      static_cast<double>(std::max(with, without)) / static_cast<double>(r.instances);
  r.mixes = {{with >= without ? gemv : none, std::max(with, without)}};
  if (std::min(with, without) > 0)
    r.mixes.push_back({with >= without ? none : gemv, std::min(with, without)});
  r.per_instance["gemv"] = {10.0 * static_cast<double>(with) / static_cast<double>(r.instances),
                            1000.0 * static_cast<double>(with) / static_cast<double>(r.instances)};
  g.ranges.push_back(r);
  g.by_kernel["gemv"] = {10 * with, 1000 * with};
  return g;
}

TEST(GpuCompare, CountsOfUnstableMixesAreIntegersPerMixWithTheirShares) {
  auto c = CompareArms({MixedLeg(70, 30), MixedLeg(40, 60)}, {MixedLeg(100, 0), MixedLeg(100, 0)},
                       "step", "A", "B");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->identity, Identity::kUnknown);
  ASSERT_EQ(c->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(c->rows[0].a_count, 5.5);  // the mean stays for machine readers
  EXPECT_EQ(c->rows[0].a_counts_by_mix, "10 (55 %), 0 (45 %)");
  EXPECT_EQ(c->rows[0].b_counts_by_mix, "10");
  std::string text = RenderComparisonText(*c, "attr");
  EXPECT_NE(text.find("10 (55 %), 0 (45 %)"), std::string::npos) << text;
  EXPECT_EQ(text.find("5.50"), std::string::npos) << text;
  EXPECT_NE(RenderComparisonMarkdown(*c, "attr").find("| 10 (55 %), 0 (45 %) | 10 |"),
            std::string::npos);
  EXPECT_EQ(ToJson(*c)["kernels"][0]["a_counts_by_mix"], "10 (55 %), 0 (45 %)");
}

TEST(GpuCompare, MixesRoundTripThroughTheRecord) {
  LegGpuTrace g = MixedLeg(70, 30);
  auto back = LegGpuTraceFromJson(ToJson(g), "leg");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->ranges.size(), 1u);
  ASSERT_EQ(back->ranges[0].mixes.size(), 2u);
  EXPECT_EQ(back->ranges[0].mixes[0].instances, 70);
  EXPECT_EQ(back->ranges[0].mixes[0].kernels, (KernelMultiset{{"gemv", 10}}));
  EXPECT_EQ(back->ranges[0].mixes[1].instances, 30);
  EXPECT_TRUE(back->ranges[0].mixes[1].kernels.empty());
}

}  // namespace
}  // namespace vouch::gputrace
