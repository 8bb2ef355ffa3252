#include "gate/gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics/formats.h"
#include "util/fs.h"

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
  // Two equal trials: no noise at all ("exact"), so the medians decide. (One trial against one
  // leg has no noise estimate: a metric that can fail is then inconclusive.)
  m.trials = {value, value};
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

// "3 % worse" fails strictly beyond, on the log scale (issue 34): a higher-is-better metric
// at 1/1.03 of its baseline (-2.91 %) passes, a hair below fails; -3.00 % fails now.
TEST(GateTest, HeadlineBoundaryIsStrict) {
  auto at = [](double decode) {
    return Row(CompareToBaseline(SeedBaseline(), Now(decode), Clock(), NoEnv()), "decode_tok_s");
  };
  EXPECT_EQ(at(97.10).verdict, GateVerdict::kPass);       // -2.90 %
  EXPECT_EQ(at(100 / 1.03).verdict, GateVerdict::kPass);  // exactly 1/1.03
  EXPECT_EQ(at(97.08).verdict, GateVerdict::kFail);       // -2.92 %
  EXPECT_EQ(at(97.00).verdict, GateVerdict::kFail);       // -3.00 %
  EXPECT_NEAR(*at(96.99).change_pct, -3.01, 1e-9);
  EXPECT_NEAR(*at(96.99).change_in_bad_direction_pct, 3.01, 1e-9);
  // A baseline whose bound is not exact in binary still passes at exactly 1/1.03.
  Baseline b = SeedBaseline();
  b.metrics[0].value = 123.4;
  b.metrics[0].trials = {123.4, 123.4};
  auto r = CompareToBaseline(b, Now(123.4 / 1.03), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kPass);
  r = CompareToBaseline(b, Now(123.4 / 1.03 * 0.9999), Clock(), NoEnv());
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
  EXPECT_EQ(Row(r, "prefill_tok_s").threshold, "warn < -4.76% (1/1.05)");
  EXPECT_EQ(r.overall, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  r = CompareToBaseline(SeedBaseline(), Now(100, 1000), Clock(), NoEnv());  // -80 %
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  r = CompareToBaseline(SeedBaseline(), Now(100, 5000 / 1.05), Clock(), NoEnv());  // 1/1.05
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kPass);
  r = CompareToBaseline(SeedBaseline(), Now(100, 4750), Clock(), NoEnv());  // -5 %: past 1/1.05
  EXPECT_EQ(Row(r, "prefill_tok_s").verdict, GateVerdict::kWarn);
}

TEST(GateTest, FailAndWarnOnOneMetric) {
  Baseline b = SeedBaseline();
  b.metrics[0].warn_pct = 1.0;
  auto r = CompareToBaseline(b, Now(98), Clock(), NoEnv());
  EXPECT_EQ(Row(r, "decode_tok_s").verdict, GateVerdict::kWarn);
  EXPECT_EQ(Row(r, "decode_tok_s").threshold, "fail < -2.91% (1/1.03), warn < -0.99% (1/1.01)");
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
  ASSERT_EQ(c.size(), 1u);  // said once
  EXPECT_NE(c[0].message.find("neither the baseline's nor this run's clock state is valid"),
            std::string::npos)
      << c[0].message;
}

TEST(GateTest, ClockCaveatIsSaidOnceWhateverTheCauses) {
  ClockState now = Clock();
  now.sm_median_mhz = 1980.0 * 0.97;
  now.sm_mean_mhz = 1975.0 * 0.97;
  now.driver = "999.0";
  auto c = ClockCaveats(Clock(), now);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].code, "clock_differs");
  EXPECT_NE(c[0].message.find("other driver"), std::string::npos) << c[0].message;
  EXPECT_NE(c[0].message.find("SM clock medians 1980 and 1921 MHz are 3.00% apart; SM clock means"),
            std::string::npos)
      << c[0].message;
  EXPECT_EQ(c[0].message.find("taken under", 1), std::string::npos) << c[0].message;
}

TEST(GateTest, ASimulatedSideIsSaidInEveryForm) {
  ClockState sim = Clock();
  sim.simulated = true;
  auto r = CompareToBaseline(SeedBaseline(), Now(100), sim, NoEnv());
  EXPECT_TRUE(r.simulated);
  EXPECT_TRUE(r.clock_attributed);  // the replayed clocks agree; they are just not measured
  ASSERT_EQ(r.caveats.size(), 1u);
  EXPECT_EQ(r.caveats[0].code, "simulated");
  EXPECT_NE(RenderGateText(r).find("caveat: SIMULATED: this run was taken on a simulated device"),
            std::string::npos)
      << RenderGateText(r);
  EXPECT_NE(RenderGateText(r).find("; SIMULATED device, not a measurement\n"), std::string::npos);
  EXPECT_NE(RenderGateMarkdown(r).find("SIMULATED device, not a measurement**"), std::string::npos)
      << RenderGateMarkdown(r);
  auto j = nlohmann::json::parse(RenderGateJson(r));
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["caveats"][0]["code"], "simulated");
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
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "headline: decode_tok_s (named in the baseline file (it does not say why))");
  size_t change_col = lines[1].find("change") + 6;
  for (int i = 2; i <= 5; ++i) EXPECT_EQ(lines[i][change_col - 1], '%') << lines[i];

  std::string md = RenderGateMarkdown(r);
  EXPECT_EQ(md.rfind("**vouch gate: fail", 0), 0u) << md;
  EXPECT_NE(
      md.find("| metric | unit | baseline | now | change | interval | now/baseline | threshold | "
              "verdict |"),
      std::string::npos);
  EXPECT_NE(
      // '<' as an entity (util/escape.h MarkdownCell): GitHub shows "fail < -3%".
      md.find("| decode_tok_s | tok/s | 100 | 96 | -4.00% | exact | 0.9600 (slower) | fail &lt; "
              "-2.91% (1/1.03) | "
              "**FAIL** |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("\nCaveats:\n- taken under different clock states"), std::string::npos);

  std::string js = RenderGateJson(r);
  EXPECT_NE(js.find("\"overall\": \"fail\""), std::string::npos);
  EXPECT_NE(js.find("\"clock_attributed\": false"), std::string::npos);
  EXPECT_NE(js.find("\"verdict\": \"warn\""), std::string::npos);
}

// A lower-is-better time up 10.7 %: the ratio is now/baseline of the time and says slower,
// in text, Markdown and JSON alike.
TEST(GateTest, RatioSaysWhichWayItReads) {
  auto r = CompareToBaseline(SeedBaseline(), Now(100, 5000, 1e9, 55.35), Clock(), NoEnv());
  const auto& row = Row(r, "latency_ms");
  EXPECT_NEAR(*row.ratio, 1.107, 1e-12);
  EXPECT_EQ(row.ratio_reads, "now/baseline time 1.1070 (now slower)");
  EXPECT_NE(RenderGateText(r).find("1.1070 (slower)"), std::string::npos) << RenderGateText(r);
  EXPECT_NE(RenderGateMarkdown(r).find("| +10.70% | exact | 1.1070 (slower) |"), std::string::npos);
  EXPECT_NE(RenderGateJson(r).find("\"ratio_reads\": \"now/baseline time 1.1070 (now slower)\""),
            std::string::npos);
  const auto& up = Row(r, "decode_tok_s");
  EXPECT_EQ(up.ratio_reads, "now/baseline throughput 1.0000 (equal)");
}

// The metrics of a sample under tests/data/metrics, read by PARSE (a parser of formats.h).
template <class Parser>
std::vector<Metric> DataFile(const std::string& name, Parser parse) {
  auto text = ReadFile(std::string(VOUCH_SOURCE_DIR) + "/tests/data/metrics/" + name);
  EXPECT_TRUE(text.ok());
  auto ms = parse(text.ok() ? *text : "", name);
  EXPECT_TRUE(ms.ok()) << ms.error().message;
  return ms.ok() ? *ms : std::vector<Metric>{};
}

// llama-bench results of another configuration are not compared: the row is an error that
// names every property that differs.
std::vector<Metric> LlamaFile(const std::string& name) { return DataFile(name, ParseLlamaBench); }

GateReport GateFiles(const std::string& base_file, const std::string& now_file) {
  std::vector<BaselineInput> in;
  std::string headline;
  for (const auto& m : LlamaFile(base_file)) {
    // Two equal trials: no noise at all, so the medians decide (one trial against one leg has
    // no noise estimate, and a metric that can fail is then inconclusive).
    in.push_back({m.name, m.unit, m.better, {m.value, m.value}, m.config});
    if (headline.empty() && m.name.rfind("tg", 0) == 0) headline = m.name;
  }
  auto b = MakeBaseline(in, headline, Clock());
  EXPECT_TRUE(b.ok()) << b.error().message;
  std::map<std::string, CurrentMetric> now;
  for (const auto& m : LlamaFile(now_file)) now[m.name] = {m.value, m.unit, {}, m.config};
  return CompareToBaseline(b.ok() ? *b : Baseline{}, now, Clock(), NoEnv());
}

TEST(GateTest, LlamaBenchOfAnotherConfigurationIsRefusedByName) {
  GateReport r = GateFiles("llama_bench.json", "llama_bench_b512.jsonl");  // batch 2048 vs 512
  const auto& row = Row(r, "tg128.tokens_per_s");
  EXPECT_EQ(row.verdict, GateVerdict::kError);
  EXPECT_EQ(row.note, "other configuration: n_batch: baseline 2048, now 512; not compared");
  EXPECT_FALSE(row.change_pct.has_value());
  EXPECT_EQ(GateExitCode(r), 1);
  // The case: a -b sweep in the other order compares batch with the same batch.
  GateReport sweep =
      GateFiles("llama_bench_b_sweep_256_512.jsonl", "llama_bench_b_sweep_512_256.jsonl");
  EXPECT_EQ(sweep.overall, GateVerdict::kPass) << RenderGateText(sweep);
  EXPECT_EQ(*Row(sweep, "tg128[n_batch=256].tokens_per_s").change_pct, 0.0);
  // Two models never compare with each other either.
  GateReport models = GateFiles("llama_bench.json", "llama_bench_two_models.jsonl");
  EXPECT_EQ(Row(models, "tg128.tokens_per_s").verdict, GateVerdict::kMissing);
}

// Google Benchmark compare.py's own test pair (tools/gbench/Inputs/test1_run{1,2}.json).
std::vector<Metric> GbenchFile(const std::string& name) {
  return DataFile(name, ParseGoogleBenchmark);
}

struct SuitePair {
  Baseline base;
  std::map<std::string, CurrentMetric> now;
};

SuitePair CompareSuite() {
  SuitePair p;
  std::vector<BaselineInput> in;
  for (const auto& m : GbenchFile("gbench_compare_test1_run1.json"))
    in.push_back({m.name, m.unit, m.better, {m.value, m.value}});  // no noise: see GateFiles
  auto b = MakeBaseline(in, "BM_SameTimes.real_time", Clock());
  EXPECT_TRUE(b.ok()) << b.error().message;
  if (b.ok()) p.base = *b;
  for (const auto& m : GbenchFile("gbench_compare_test1_run2.json"))
    p.now[m.name] = {m.value, m.unit};
  return p;
}

// By default only the headline fails: BM_100xSlower (+9900 %) is a warn, and the output says
// how to make it fail.
TEST(GateTest, HundredTimesSlowerSecondaryOnlyWarnsByDefault) {
  SuitePair p = CompareSuite();
  auto r = CompareToBaseline(p.base, p.now, Clock(), NoEnv());
  const auto& row = Row(r, "BM_100xSlower.real_time");
  EXPECT_EQ(row.verdict, GateVerdict::kWarn);
  EXPECT_NEAR(*row.change_pct, 9900.0, 1e-6);
  EXPECT_EQ(r.overall, GateVerdict::kWarn);
  EXPECT_EQ(GateExitCode(r), 0);
  EXPECT_NE(RenderGateText(r).find("note: a warn never fails the gate; to fail every metric past "
                                   "a threshold give --fail-pct PCT"),
            std::string::npos)
      << RenderGateText(r);
  EXPECT_NE(RenderGateMarkdown(r).find("Note: a warn never fails"), std::string::npos);
}

TEST(GateTest, FailPctFailsEverySecondaryPastIt) {
  SuitePair p = CompareSuite();
  ThresholdPolicy policy;
  policy.fail_pct_all = 5.0;
  ASSERT_TRUE(ApplyThresholdPolicy(&p.base, policy).ok());
  auto r = CompareToBaseline(p.base, p.now, Clock(), NoEnv());
  EXPECT_EQ(Row(r, "BM_100xSlower.real_time").verdict, GateVerdict::kFail);
  EXPECT_EQ(Row(r, "BM_2xSlower.cpu_time").verdict, GateVerdict::kFail);
  EXPECT_EQ(Row(r, "BM_10PercentSlower.real_time").verdict, GateVerdict::kFail);
  EXPECT_EQ(Row(r, "BM_1PercentSlower.real_time").verdict, GateVerdict::kPass);  // +1 %
  EXPECT_EQ(Row(r, "BM_100xFaster.real_time").verdict, GateVerdict::kPass);
  EXPECT_EQ(Row(r, "BM_SameTimes.real_time").fail_pct, 3.0);  // a tighter one is kept
  EXPECT_EQ(GateExitCode(r), 1);
}

TEST(GateTest, PerMetricThresholdFromTheCommandLine) {
  SuitePair p = CompareSuite();
  auto specs = ParseThresholdSpecs(
      {"BM_10PercentSlower.real_time=fail:8,warn:1", "BM_100xSlower.real_time=warn:off"});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ThresholdPolicy policy;
  policy.overrides = *specs;
  ASSERT_TRUE(ApplyThresholdPolicy(&p.base, policy).ok());
  auto r = CompareToBaseline(p.base, p.now, Clock(), NoEnv());
  EXPECT_EQ(Row(r, "BM_10PercentSlower.real_time").verdict, GateVerdict::kFail);
  EXPECT_EQ(Row(r, "BM_10PercentSlower.real_time").threshold, "fail > +8%, warn > +1%");
  EXPECT_EQ(Row(r, "BM_100xSlower.real_time").verdict, GateVerdict::kPass);  // no threshold left
  EXPECT_EQ(Row(r, "BM_100xSlower.real_time").threshold, "none");
  EXPECT_EQ(Row(r, "BM_10PercentSlower.cpu_time").verdict, GateVerdict::kWarn);  // untouched
  // An override for a metric the baseline lacks names it and what is there.
  ThresholdPolicy bad;
  bad.overrides["BM_Nope.real_time"].fail_pct = 1;
  auto s = ApplyThresholdPolicy(&p.base, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("'BM_Nope.real_time': the baseline has no such metric (it has: "
                                   "BM_SameTimes.real_time"),
            std::string::npos)
      << s.error().message;
}

TEST(GateTest, ThresholdSpecParsing) {
  auto nv = ParseThresholdSpec("simple[Device=0].nv/cold/time/gpu/mean=fail:2.5%");
  ASSERT_TRUE(nv.ok()) << nv.error().message;
  EXPECT_EQ(nv->first, "simple[Device=0].nv/cold/time/gpu/mean");
  EXPECT_EQ(nv->second.fail_pct, 2.5);
  EXPECT_FALSE(nv->second.warn_pct.has_value());
  auto off = ParseThresholdSpec("x=fail:off,warn:4");
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->second.clear_fail);
  EXPECT_EQ(off->second.warn_pct, 4.0);
  auto err = [](const std::string& spec) {
    auto r = ParseThresholdSpec(spec);
    EXPECT_FALSE(r.ok()) << spec;
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_NE(err("tok_s").find("expected NAME=fail:PCT,warn:PCT"), std::string::npos);
  EXPECT_NE(err("tok_s=").find("expected NAME="), std::string::npos);
  EXPECT_NE(err("tok_s=fial:3").find("'fial:3' is not fail:PCT or warn:PCT"), std::string::npos);
  EXPECT_NE(err("tok_s=fail:-3").find("'-3' is not a percentage >= 0"), std::string::npos);
  EXPECT_NE(err("tok_s=fail:3x").find("'3x' is not a percentage"), std::string::npos);
  EXPECT_NE(err("tok_s=fail").find("has no percentage"), std::string::npos);
  auto twice = ParseThresholdSpecs({"a=fail:1", "a=warn:2"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("'a' is given twice"), std::string::npos);
}

TEST(GateTest, MarkdownKeepsWithinItsLimitWithWhatMattersFirst) {
  ClockState now = Clock();
  auto r = CompareToBaseline(SeedBaseline(), Now(96, 4700, 1e9, 50), now, NoEnv());
  const std::string whole = RenderGateMarkdown(r);
  EXPECT_EQ(whole, RenderGateMarkdown(r, std::string::npos));  // it fits: nothing cut
  // The failing row is the first of the table, whatever the baseline's order.
  const auto table = whole.find("|---|");
  ASSERT_NE(table, std::string::npos);
  const auto row = whole.find('\n', table) + 1;
  EXPECT_NE(whole.substr(row, whole.find('\n', row) - row).find("**FAIL**"), std::string::npos)
      << whole;
  for (std::size_t limit : {whole.size() - 1, std::size_t{700}, std::size_t{120}}) {
    const std::string md = RenderGateMarkdown(r, limit, "pr.full.md");
    EXPECT_LE(md.size(), limit) << md;
    EXPECT_NE(md.find("pr.full.md"), std::string::npos) << md;
  }
}

}  // namespace
}  // namespace vouch
