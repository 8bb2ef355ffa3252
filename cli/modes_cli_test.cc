// Modes across process spawns and serving percentiles, through the real binary on the
// simulated device: gate and ab refuse a metric whose legs form two modes unless
// --allow-modes; a vllm serving leg's p99 from too few requests is flagged with the count
// needed. The statistics are tested in src/stats (modes_test.cc, percentiles_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

using testing_util::Has;
using Res = testing_util::ShellResult;

class ModesCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // A leg: tok_s = BASE, or 26 on every other leg of its arm when BIMODAL is set (a counter
    // file per arm), with a small deterministic jitter.
    Script("leg.sh",
           "sleep 0.7\n"
           "c=count_${ARM:-run}; n=$(cat $c 2>/dev/null | wc -l); echo x >> $c\n"
           "v=$(awk -v n=$n -v b=\"${BIMODAL:-}\" -v base=\"${BASE:-33}\" "
           "'BEGIN{m=base; if (b != \"\" && n % 2 == 1) m=26; printf \"%.3f\", "
           "m+(n%3)*0.05}')\n"
           "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
           "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  }
  Res Vouch(const std::string& args, const std::string& env = "") const {
    return testing_util::Shell(fmt::format("cd {} && {} VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}",
                                           D(), env, D(), kBusy, VOUCH_BINARY, args));
  }
};

TEST_F(ModesCli, GateRefusesTwoModesUnlessAllowed) {
  auto b = Vouch(fmt::format("baseline {} --trials 4 --baseline base.json -- ./leg.sh", kFast));
  ASSERT_EQ(b.rc, 0) << b.out;
  auto g = Vouch(
      fmt::format("gate {} --baseline base.json --warmup 0 --reps 6 --out g -- ./leg.sh", kFast),
      "BIMODAL=1");
  EXPECT_EQ(g.rc, 3) << g.out;
  EXPECT_TRUE(Has(g.out, "tok_s: this run's legs show two modes: 33.0 tok/s in 3 legs, 26.1 in 3"))
      << g.out;
  EXPECT_TRUE(Has(g.out, "refused: a median over two modes")) << g.out;
  EXPECT_TRUE(Has(g.out, "--allow-modes")) << g.out;
  EXPECT_TRUE(Has(g.out, "false-alarm rate is 1 %")) << g.out;
  EXPECT_FALSE(Has(g.out, "verdict")) << g.out;  // no table over the modes
  // The saved record: refused again; with --allow-modes the gate judges the median.
  EXPECT_EQ(Vouch("gate --baseline base.json g").rc, 3);
  auto allowed = Vouch("gate --baseline base.json --allow-modes g");
  EXPECT_NE(allowed.rc, 3) << allowed.out;
  EXPECT_TRUE(Has(allowed.out, "warning: tok_s: this run's legs show two modes")) << allowed.out;
  EXPECT_TRUE(Has(allowed.out, "tok_s")) << allowed.out;
}

// A warn-only metric (a secondary, which warns at 5 % and never fails) cannot fail the gate:
// its modes are a warning, and the gate goes on to judge the headline.
TEST_F(ModesCli, GateOnlyWarnsAboutModesOfAWarnOnlyMetric) {
  Script("two.sh",
         "sleep 0.7\n"
         "c=count_two; n=$(cat $c 2>/dev/null | wc -l); echo x >> $c\n"
         "p=$(awk -v n=$n -v b=\"${BIMODAL:-}\" "
         "'BEGIN{m=100; if (b != \"\" && n % 2 == 1) m=140; printf \"%.3f\", m+(n%3)*0.05}')\n"
         "echo '{\"name\":\"tok_s\",\"value\":33.0,\"unit\":\"tok/s\",\"better\":\"higher\"}'"
         " >> \"$VOUCH_METRICS\"\n"
         "echo \"{\\\"name\\\":\\\"prefill_ms\\\",\\\"value\\\":$p,\\\"unit\\\":\\\"ms\\\","
         "\\\"better\\\":\\\"lower\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto b = Vouch(fmt::format(
      "baseline {} --trials 4 --headline tok_s --baseline base.json -- ./two.sh", kFast));
  ASSERT_EQ(b.rc, 0) << b.out;
  auto g = Vouch(
      fmt::format("gate {} --baseline base.json --warmup 0 --reps 6 --out g -- ./two.sh", kFast),
      "BIMODAL=1");
  EXPECT_NE(g.rc, 3) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "warning: prefill_ms: this run's legs show two modes: 140 ms in 3 legs, 100 in 3 "
                  "(warn-only: the gate goes on)"))
      << g.out;
  EXPECT_TRUE(Has(g.out, "gate: pass")) << g.out;
  EXPECT_FALSE(Has(g.out, "refused")) << g.out;
  EXPECT_TRUE(Has(g.out, "tok_s")) << g.out;
}

TEST_F(ModesCli, BaselineWarnsWhenItsTrialsShowModes) {
  auto b = Vouch(fmt::format("baseline {} --trials 4 --baseline base.json -- ./leg.sh", kFast),
                 "BIMODAL=1");
  ASSERT_EQ(b.rc, 0) << b.out;
  EXPECT_TRUE(Has(b.out, "tok_s: the trials show two modes: 33.0 tok/s in 2 trials, 26.0 in 2"))
      << b.out;
}

TEST_F(ModesCli, AbRefusesAnArmWithTwoModesUnlessAllowed) {
  const std::string ab = fmt::format(
      "ab {} --a-env ARM=a --a-env BIMODAL=1 --b-env ARM=b --pairs 4 --seed 3 --band 1", kFast);
  auto r = Vouch(ab + " --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "refused: tok_s: arm A's legs show two modes: ")) << r.out;
  EXPECT_TRUE(Has(r.out, "--allow-modes")) << r.out;
  EXPECT_FALSE(Has(r.out, "arm B's legs show")) << r.out;
  std::filesystem::remove(D("count_a"));
  std::filesystem::remove(D("count_b"));
  auto ok = Vouch(ab + " --allow-modes --out s -- ./leg.sh");
  EXPECT_NE(ok.rc, 3) << ok.out;
  EXPECT_TRUE(Has(ok.out, "modes allowed: tok_s: arm A's legs show two modes")) << ok.out;
  // One record, one verdict: --from applies the same rules (issue 34), the record's JSON says
  // the same, and a refused verdict carries no direction word anywhere.
  auto again = Vouch("ab --from r/record.json");
  EXPECT_EQ(again.rc, 3) << again.out;
  EXPECT_TRUE(Has(again.out, "refused: tok_s: arm A's legs show two modes: ")) << again.out;
  for (const char* word : {"B faster", "B slower"}) {
    EXPECT_FALSE(Has(r.out, word)) << word << "\n" << r.out;
    EXPECT_FALSE(Has(again.out, word)) << word << "\n" << again.out;
  }
  auto j = Vouch("ab --from r/record.json --json");
  EXPECT_EQ(j.rc, 3);
  auto v = nlohmann::json::parse(j.out.substr(j.out.find('{')));
  auto rec = Json("r/record.json")["extra"]["verdict"];
  for (const auto& x : {v, rec}) {
    EXPECT_EQ(x["verdict"], "refused");
    EXPECT_EQ(x["decision"]["verdict"], "refused");
    EXPECT_EQ(x["clock_normalised"]["verdict"], "refused");
    EXPECT_FALSE(x["decision"]["b_over_a"].contains("reads")) << x.dump();
  }
  // The allowed run keeps --allow-modes in its plan: --from gives its verdict again.
  auto allowed_again = Vouch("ab --from s/record.json");
  EXPECT_EQ(allowed_again.rc, ok.rc) << allowed_again.out;
  EXPECT_EQ(Json("s/record.json")["extra"]["verdict"]["verdict"],
            Json("s/record.json")["extra"]["verdict"]["decision"]["verdict"]);
}

// Modes that do not stop a verdict the legs can give: arm A alternates 33 and 26 tok/s, arm B
// runs at 20, so every B leg is below every A leg. An exact rank test decides B slower (p =
// 2 / C(8, 4) = 0.029) without averaging A's modes, live and from the record alike.
TEST_F(ModesCli, AbArmsApartAreDecidedByRankDespiteModes) {
  const std::string ab = fmt::format(
      "ab {} --a-env ARM=a --a-env BIMODAL=1 --b-env ARM=b --b-env BASE=20 --pairs 4 --seed 3 "
      "--band 1",
      kFast);
  auto r = Vouch(ab + " --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: B slower")) << r.out;
  EXPECT_TRUE(Has(r.out, "decided by rank, not by the medians over modes")) << r.out;
  EXPECT_TRUE(Has(r.out, "p = 2 / C(8, 4) = 0.0286")) << r.out;
  auto again = Vouch("ab --from r/record.json --json --fail-on slower");
  EXPECT_EQ(again.rc, 5) << again.out;
  auto v = nlohmann::json::parse(again.out.substr(again.out.find('{')));
  EXPECT_EQ(v["verdict"], "B slower");
  EXPECT_EQ(v["decided_by"], "rank (modes)");
  EXPECT_EQ(v["modes"]["ruling"], "decided by rank");
  EXPECT_EQ(Json("r/record.json")["extra"]["verdict"]["verdict"], "B slower");
}

TEST_F(ModesCli, ServingPercentileFromTooFewRequestsIsFlagged) {
  Script("serve.sh",
         "sleep 0.7\n"
         "echo '{\"completed\": 50, \"request_throughput\": 4.2, \"output_throughput\": 512.0, "
         "\"p99_ttft_ms\": 81.5, \"p99_e2el_ms\": 930.0, \"median_ttft_ms\": 40.0}' > "
         "result.json\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --metric vllm:result.json --min-requests 100 --out r -- "
      "./serve.sh",
      kFast));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "serving (leg 1): p99 of 50 completed requests is not a figure "
                  "(p99_e2el_ms, p99_ttft_ms not quoted): a p99 at 99 % confidence needs at least "
                  "459 requests; the slowest of 50 bounds p91.2 at 99 % (and the p99 at only "
                  "39.5 %)"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "extreme of")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "leg 1 completed fewer requests than --min-requests 100 (fewest: 50); their "
                  "percentiles are not quoted"))
      << r.out;
  // In the record too, for gate, ab and the report.
  auto rec = Json("r/record.json");
  bool found = false;
  for (const auto& c : rec["caveats"])
    found = found || Has(c.get<std::string>(), "needs at least 459 requests");
  EXPECT_TRUE(found) << rec["caveats"].dump();
  // Not a figure anywhere: the leg's metrics hold no p99, the median stays.
  for (const auto& m : rec["legs"][0]["metrics"])
    EXPECT_NE(m["name"].get<std::string>().substr(0, 4), "p99_") << m.dump();
  EXPECT_TRUE(
      Has(rec["legs"][0]["result"]["notes"].dump(), "serving: p99 of 50 completed requests"))
      << rec["legs"][0].dump();
  EXPECT_TRUE(Has(rec["legs"][0]["metrics"].dump(), "median_ttft_ms"));
}

}  // namespace
}  // namespace vouch
