// One verdict per record (issue 34), through the binary on the simulated device: a gate of one
// value a side never FAILs or passes on it. With hyperfine's own per-run `times` inside each
// value the noise is there to use; with none the gate is inconclusive (exit 2) and says why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
using testing_util::Has;

// Two hyperfine results of one command, as hyperfine writes them (--export-json): the second's
// mean is 36 % above the first's, inside their runs' own spread.
void WriteHyperfine(const std::string& path, const std::vector<double>& times) {
  double sum = 0, sq = 0;
  for (double t : times) sum += t;
  const double mean = sum / times.size();
  for (double t : times) sq += (t - mean) * (t - mean);
  nlohmann::json r = {{"command", "./bench"},
                      {"mean", mean},
                      {"stddev", std::sqrt(sq / (times.size() - 1))},
                      {"median", times[times.size() / 2]},
                      {"user", 0.001},
                      {"system", 0.0},  // as hyperfine writes for a short command
                      {"min", times.front()},
                      {"max", times.back()},
                      {"times", times},
                      {"exit_codes", std::vector<int>(times.size(), 0)}};
  std::ofstream(path) << nlohmann::json{{"results", {r}}}.dump(2);
}

class VerdictCli : public testing_util::ScratchDirTest {
 protected:
  testing_util::ShellResult Vouch(const std::string& args) const {
    return VouchOnSim(kBusy, args, 120);
  }
};

TEST_F(VerdictCli, AOneValueGateUsesHyperfinesTimesAndNeverFailsOnNoise) {
  WriteHyperfine(D("first.json"), {0.031, 0.036, 0.040, 0.043, 0.048, 0.053, 0.061});
  WriteHyperfine(D("second.json"), {0.033, 0.041, 0.052, 0.060, 0.068, 0.075, 0.086});
  // A leg that copies the next file to hf.json: the baseline reads the first, the gate the second.
  Script("leg.sh",
         "sleep 0.7\n"
         "n=$(cat count 2>/dev/null | wc -l); echo x >> count\n"
         "if [ $n -eq 0 ]; then cp first.json hf.json; else cp second.json hf.json; fi\n");
  auto b = Vouch(
      "baseline --min-busy-readings 5 --trials 1 --metric hyperfine:hf.json --baseline base.json "
      "-- ./leg.sh");
  ASSERT_EQ(b.rc, 0) << b.out;
  auto base = Json("base.json");
  bool kept = false;
  for (const auto& m : base["metrics"]) kept |= m.contains("samples") && m["samples"].size() == 7;
  EXPECT_TRUE(kept) << base.dump(2);
  auto g = Vouch(
      "gate --min-busy-readings 5 --baseline base.json --warmup 0 --reps 1 --json --metric "
      "hyperfine:hf.json --out g -- ./leg.sh");
  EXPECT_NE(g.rc, 1) << g.out;  // +36 % of the medians, inside the runs' noise: no FAIL
  auto j = nlohmann::json::parse(g.out.substr(g.out.find("{\n")));
  bool judged = false;
  for (const auto& row : j["rows"])
    if (row.value("noise_note", "").find("the noise is the tool's own per-run values (7 and 7)") !=
        std::string::npos)
      judged = true;
  EXPECT_TRUE(judged) << j.dump(2);
}

TEST_F(VerdictCli, AOneValueGateWithNoNoiseEstimateIsInconclusive) {
  Script("leg.sh",
         "sleep 0.7\n"
         "n=$(cat count 2>/dev/null | wc -l); echo x >> count\n"
         "v=$([ $n -eq 0 ] && echo 100 || echo 64)\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  ASSERT_EQ(Vouch("baseline --min-busy-readings 5 --trials 1 --baseline base.json -- ./leg.sh").rc,
            0);
  auto g = Vouch("gate --min-busy-readings 5 --baseline base.json --warmup 0 --reps 1 -- ./leg.sh");
  EXPECT_EQ(g.rc, 2) << g.out;  // -36 %: still not a FAIL on one value a side
  EXPECT_TRUE(Has(g.out, "one value on each side and no per-run values inside them")) << g.out;
  EXPECT_TRUE(Has(g.out, "inconclusive")) << g.out;
}

// vouch run's summary flags a metric whose legs form two modes beside its median (issue 34 2d).
TEST_F(VerdictCli, RunFlagsModesBesideTheMedian) {
  Script("leg.sh",
         "sleep 0.6\n"
         "n=$(cat count 2>/dev/null | wc -l); echo x >> count\n"
         "v=$([ $((n % 2)) -eq 0 ] && echo 33 || echo 26)\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v.$n,\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch("run --min-busy-readings 5 --warmup 0 --reps 6 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "WARNING: the legs show two modes: 33.2 tok/s in 3 legs, 26.3 in 3: the "
                  "median is a number no process ran at"))
      << r.out;
  bool in_record = false;
  const auto rec = Json("r/record.json");
  for (const auto& s : rec["summary"]["run"])
    in_record |= s.value("name", "") == "tok_s" && s.contains("modes");
  EXPECT_TRUE(in_record);
}

// A gate whose baseline and legs are too few values for the modes test runs the legs the test
// needs before it passes (issue 34 item 2c); `gate RECORD` of its record gives the same verdict.
TEST_F(VerdictCli, AGateTooSmallToCheckModesRunsTheLegsItNeedsBeforePassing) {
  Script("leg.sh",
         "sleep 0.6\n"
         "n=$(cat count 2>/dev/null | wc -l); echo x >> count\n"
         "v=$(echo 100.0 100.3 100.1 100.2 | cut -d' ' -f$((n + 1)))\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  ASSERT_EQ(Vouch("baseline --min-busy-readings 5 --trials 2 --baseline base.json -- ./leg.sh").rc,
            0);
  auto g = Vouch(
      "gate --min-busy-readings 5 --baseline base.json --warmup 0 --reps 1 --out g -- ./leg.sh");
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "tok_s: modes not checkable at 3 values (the baseline's 2 trials and this run's "
                  "1 leg): 1 more leg before it can pass"))
      << g.out;
  EXPECT_EQ(Json("g/record.json").value("measured_legs", 0), 2);
  auto again = Vouch("gate --baseline base.json g");
  EXPECT_EQ(again.rc, g.rc) << again.out;
  EXPECT_FALSE(Has(again.out, "not checkable")) << again.out;
}

}  // namespace
}  // namespace vouch
