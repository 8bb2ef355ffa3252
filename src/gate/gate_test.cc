#include "gate/gate.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

ClockState Clock() { return {"GPU-1", "boot-1", "570.86.15", 1980.0, 1975.0, true}; }

BaselineMetric M(std::string name, double value, std::string unit, Better better,
                 std::optional<double> fail, std::optional<double> warn, std::string skip = "") {
  BaselineMetric m;
  m.name = std::move(name);
  m.value = value;
  m.unit = std::move(unit);
  m.better = better;
  m.fail_pct = fail;
  m.warn_pct = warn;
  m.skip_env = std::move(skip);
  return m;
}

// The seed's shape: decode -3 % fails, prefill -5 % warns, peak VRAM +10 % fails.
Baseline SeedBaseline() {
  Baseline b;
  b.headline = "decode_tok_s";
  b.metrics = {
      M("decode_tok_s", 100, "tok/s", Better::kHigher, 3.0, std::nullopt),
      M("prefill_tok_s", 5000, "tok/s", Better::kHigher, std::nullopt, 5.0),
      M("own_peak_vram_bytes", 1e9, "bytes", Better::kLower, 10.0, std::nullopt, "VOUCH_SKIP_VRAM"),
      M("latency_ms", 50, "ms", Better::kLower, 3.0, std::nullopt)};
  b.clock = Clock();
  b.trials = 5;
  return b;
}

std::map<std::string, CurrentMetric> Now(double decode, double prefill = 5000, double vram = 1e9,
                                         double latency_ms = 50) {
  return {{"decode_tok_s", {decode, "tok/s"}},
          {"prefill_tok_s", {prefill, "tok/s"}},
          {"own_peak_vram_bytes", {vram, "bytes"}},
          {"latency_ms", {latency_ms, "ms"}}};
}

EnvLookup NoEnv() {
  return [](const std::string&) { return std::optional<std::string>(); };
}

const GateRow& Row(const GateReport& r, const std::string& name) {
  for (const auto& row : r.rows)
    if (row.metric == name) return row;
  ADD_FAILURE() << "no row " << name;
  return r.rows.front();
}

TEST(GateTest, AllEqualPasses) {
  auto r = CompareToBaseline(SeedBaseline(), Now(100), Clock(), NoEnv());
  EXPECT_EQ(r.overall, GateVerdict::kPass);
  EXPECT_EQ(GateExitCode(r), 0);
  EXPECT_TRUE(r.clock_attributed);
  EXPECT_TRUE(r.caveats.empty());
  EXPECT_EQ(*Row(r, "decode_tok_s").change_pct, 0.0);
}

// "Worse than -3 %" fails: strictly beyond. 3.00 % worse passes, 3.01 % fails.
TEST(GateTest, HeadlineBoundaryIsStrict) {
  auto at = [](double decode) {
    return Row(CompareToBaseline(SeedBaseline(), Now(decode), Clock(), NoEnv()), "decode_tok_s");
  };
  EXPECT_EQ(at(97.01).verdict, GateVerdict::kPass);  // -2.99 %
  EXPECT_EQ(at(97.00).verdict, GateVerdict::kPass);  // -3.00 %
  EXPECT_EQ(at(96.99).verdict, GateVerdict::kFail);  // -3.01 %
  EXPECT_NEAR(*at(96.99).change_pct, -3.01, 1e-9);
  EXPECT_NEAR(*at(96.99).change_in_bad_direction_pct, 3.01, 1e-9);
  // A baseline whose 3 % is not exact in binary still passes at exactly -3 %.
  Baseline b = SeedBaseline();
  b.metrics[0].value = 123.4;
  auto r = CompareToBaseline(b, Now(123.4 * 0.97), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kPass);
  r = CompareToBaseline(b, Now(123.4 * 0.9699), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kFail);
  EXPECT_EQ(GateExitCode(r), 1);
  // Faster is never a failure.
  EXPECT_EQ(at(150).verdict, GateVerdict::kPass);
}

TEST(GateTest, LowerIsBetterLatencyUpFourPercentFails) {
  auto r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 1e9, 52), Clock(), NoEnv());
  const auto& row = Row(r, "latency_ms");
  EXPECT_EQ(row.verdict, GateVerdict::kFail);
  EXPECT_NEAR(*row.change_pct, 4.0, 1e-9);  // natural sense: latency went up
  EXPECT_NEAR(*row.change_in_bad_direction_pct, 4.0, 1e-9);
  EXPECT_EQ(row.threshold, "fail > +3%");
  EXPECT_EQ(r.overall, GateVerdict::kFail);
  // Latency down 4 % is an improvement.
  r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 1e9, 48), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "latency_ms").verdict, GateVerdict::kPass);
  EXPECT_NEAR(*Row(r, "latency_ms").change_in_bad_direction_pct, -4.0, 1e-9);
}

TEST(GateTest, WarnOnlyMetricNeverFails) {
  auto r = CompareToBaseline(SeedBaseline(), Now(100, 4700), Clock(), NoEnv());  // -6 %
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kWarn);
  EXPECT_EQ(Row(r, "prefill_tok_s").threshold, "warn < -5%");
  EXPECT_EQ(r.overall, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  r = CompareToBaseline(SeedBaseline(), Now(100, 1000), Clock(), NoEnv());  // -80 %
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  r = CompareToBaseline(SeedBaseline(), Now(100, 4750), Clock(), NoEnv());  // exactly -5 %
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kPass);
}

TEST(GateTest, FailAndWarnOnOneMetric) {
  Baseline b = SeedBaseline();
  b.metrics[0].warn_pct = 1.0;
  auto r = CompareToBaseline(b, Now(98), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kWarn);
  EXPECT_EQ(Row(r, "decode_tok_s").threshold, "fail < -3%, warn < -1%");
  r = CompareToBaseline(b, Now(96), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kFail);
}

TEST(GateTest, VramUpTenAndAHalfPercentFails) {
  auto r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 1.105e9), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "own_peak_vram_bytes").verdict, GateVerdict::kFail);
  EXPECT_NEAR(*Row(r, "own_peak_vram_bytes").change_pct, 10.5, 1e-9);
  EXPECT_EQ(GateExitCode(r), 1);
  r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 1.10e9), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "own_peak_vram_bytes").verdict, GateVerdict::kPass);
}

TEST(GateTest, SkipVariable) {
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "VOUCH_SKIP_VRAM") return "1";
    return std::nullopt;
  };
  auto r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 2e9), Clock(), env);
  const auto& row = Row(r, "own_peak_vram_bytes");
  EXPECT_EQ(row.verdict, GateVerdict::kSkipped);
  EXPECT_EQ(row.note, "VOUCH_SKIP_VRAM=1");
  EXPECT_NEAR(*row.change_pct, 100.0, 1e-9);  // still shown
  EXPECT_EQ(r.overall, GateVerdict::kPass);
  // Only "1" skips.
  auto env0 = [](const std::string&) -> std::optional<std::string> { return "0"; };
  r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 2e9), Clock(), env0);
  EXPECT_EQ(Row(r, "own_peak_vram_bytes").verdict, GateVerdict::kFail);
  // A skipped metric may be absent from the run.
  auto now = Now(100);
  now.erase("own_peak_vram_bytes");
  r = CompareToBaseline(SeedBaseline(), now, Clock(), env);
  EXPECT_EQ(Row(r, "own_peak_vram_bytes").verdict, GateVerdict::kSkipped);
  EXPECT_EQ(r.overall, GateVerdict::kPass);
}

TEST(GateTest, MissingMetricFails) {
  auto now = Now(100);
  now.erase("prefill_tok_s");  // a warn-only metric, yet its absence fails the gate
  now["extra_metric"] = {1, "x"};
  auto r = CompareToBaseline(SeedBaseline(), now, Clock(), NoEnv());
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kMissing);
  EXPECT_EQ(r.overall, GateVerdict::kFail);
  EXPECT_EQ(GateExitCode(r), 1);
  ASSERT_EQ(r.not_in_baseline.size(), 1u);
  EXPECT_EQ(r.not_in_baseline[0], "extra_metric");
}

TEST(GateTest, UnitMismatchIsAnErrorRow) {
  auto now = Now(100);
  now["latency_ms"] = {50000, "us"};
  auto r = CompareToBaseline(SeedBaseline(), now, Clock(), NoEnv());
  const auto& row = Row(r, "latency_ms");
  EXPECT_EQ(row.verdict, GateVerdict::kError);
  EXPECT_FALSE(row.change_pct.has_value());
  EXPECT_EQ(row.note, "unit mismatch: baseline 'ms', run 'us'; not compared");
  EXPECT_EQ(r.overall, GateVerdict::kFail);
}

TEST(GateTest, ZeroBaselineAndNonFiniteAreErrors) {
  Baseline b = SeedBaseline();
  b.metrics[3].value = 0;
  auto r = CompareToBaseline(b, Now(100), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "latency_ms").verdict, GateVerdict::kError);
  r = CompareToBaseline(SeedBaseline(), Now(NAN), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kError);
  EXPECT_EQ(GateExitCode(r), 1);
}

TEST(GateTest, ClockCaveatOnOtherBoot) {
  ClockState now = Clock();
  now.boot_id = "boot-2";
  auto r = CompareToBaseline(SeedBaseline(), Now(100), now, NoEnv());
  EXPECT_FALSE(r.clock_attributed);
  ASSERT_EQ(r.caveats.size(), 1u);
  EXPECT_EQ(r.caveats[0].code, "clock_differs");
  EXPECT_NE(r.caveats[0].message.find("taken under different clock states"), std::string::npos);
  EXPECT_NE(r.caveats[0].message.find("other boot"), std::string::npos);
  EXPECT_EQ(r.overall, GateVerdict::kPass);  // a caveat, not a verdict
}

TEST(GateTest, ClockCaveatOnMeanOffset) {
  ClockState now = Clock();
  now.sm_mean_mhz = 1975.0 * 1.012;  // medians equal, means 1.2 % apart
  auto r = CompareToBaseline(SeedBaseline(), Now(100), now, NoEnv());
  ASSERT_EQ(r.caveats.size(), 1u);
  EXPECT_NE(r.caveats[0].message.find("SM clock means"), std::string::npos);
  EXPECT_NE(r.caveats[0].message.find("1.20% apart"), std::string::npos) << r.caveats[0].message;
  // 0.9 % is within the rule.
  now.sm_mean_mhz = 1975.0 * 1.009;
  now.sm_median_mhz = 1980.0 * 0.991;
  EXPECT_TRUE(ClockCaveats(Clock(), now).empty());
  now.sm_median_mhz = 1980.0 * 0.985;
  auto c = ClockCaveats(Clock(), now);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].message.find("SM clock medians"), std::string::npos);
}

TEST(GateTest, ClockCaveatOnOtherGpuAndInvalid) {
  ClockState now = Clock();
  now.gpu_uuid = "GPU-2";
  EXPECT_EQ(ClockCaveats(Clock(), now).size(), 1u);
  ClockState invalid;
  auto c = ClockCaveats(Clock(), invalid);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].code, "clock_unattributed");
  EXPECT_NE(c[0].message.find("this run's clock state is not valid"), std::string::npos);
  c = ClockCaveats(invalid, invalid);
  EXPECT_EQ(c.size(), 2u);
}

TEST(GateTest, RenderersShowRowsCaveatsAndVerdict) {
  ClockState now = Clock();
  now.boot_id = "boot-2";
  auto r = CompareToBaseline(SeedBaseline(), Now(96, 4700, 1e9, 50), now, NoEnv());
  std::string text = RenderGateText(r);
  EXPECT_NE(text.find("decode_tok_s"), std::string::npos);
  EXPECT_NE(text.find("-4.00%"), std::string::npos);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(text.find("caveat: taken under different clock states"), std::string::npos);
  EXPECT_NE(text.find("gate: fail (2 pass, 1 warn, 1 fail); not clock-attributed"),
            std::string::npos)
      << text;
  // Aligned: the "baseline" column ends at the same offset on every table line.
  auto lines = [&] {
    std::vector<std::string> out;
    size_t s = 0;
    for (size_t e; (e = text.find('\n', s)) != std::string::npos; s = e + 1)
      out.push_back(text.substr(s, e - s));
    return out;
  }();
  ASSERT_GE(lines.size(), 5u);
  size_t change_col = lines[0].find("change") + 6;
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(lines[i][change_col - 1], '%') << lines[i];

  std::string md = RenderGateMarkdown(r);
  EXPECT_EQ(md.rfind("**vouch gate: fail", 0), 0u) << md;
  EXPECT_NE(md.find("| metric | unit | baseline | now | change | threshold | verdict |"),
            std::string::npos);
  EXPECT_NE(md.find("| decode_tok_s | tok/s | 100 | 96 | -4.00% | fail < -3% | **FAIL** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("\nCaveats:\n- taken under different clock states"), std::string::npos);

  std::string js = RenderGateJson(r);
  EXPECT_NE(js.find("\"overall\": \"fail\""), std::string::npos);
  EXPECT_NE(js.find("\"clock_attributed\": false"), std::string::npos);
  EXPECT_NE(js.find("\"verdict\": \"warn\""), std::string::npos);
}

}  // namespace
}  // namespace vouch
