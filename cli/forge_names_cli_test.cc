// Issue 21 ("Numbers nobody can forge"), classes 1 and 10, through the real binary on the
// simulated device: a leg cannot write vouch's figures (vouch.*, gpu.*) from any source, and a
// hyperfine sweep is keyed by what it ran, not by its position.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
const std::string kMetricsData = VOUCH_SOURCE_DIR "/tests/data/metrics";
constexpr const char* kFast = "--min-busy-readings 5";

class ForgeNamesCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 60) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  // The leg's metrics in the record, by name: every entry of that name.
  static std::vector<json> MetricsNamed(const json& leg, const std::string& name) {
    std::vector<json> out;
    for (const auto& m : leg["metrics"])
      if (m["name"] == name) out.push_back(m);
    return out;
  }
};

// A channel line under gpu.* or vouch.* replaced vouch's figure (the first value of a name
// won, and the leg's came first): `--expect vouch.wall_s=1` passed. It is refused with the
// leg's file and line, the leg is invalid, and vouch's own figures stand alone.
TEST_F(ForgeNamesCli, AChannelLineUnderAReservedNameIsRefusedWithLegAndLine) {
  Script("leg.sh",
         "sleep 0.8\n"
         "echo '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\",\"better\":\"higher\"}' >> "
         "\"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"vouch.wall_s\",\"value\":1,\"unit\":\"s\",\"better\":\"lower\"}' >> "
         "\"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --expect vouch.wall_s=1 --expect vouch.exit_status=0 "
      "-- ./leg.sh",
      kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "legs/001-run-measured/metrics.jsonl:2: metric 'vouch.wall_s' is under "
                  "'vouch.*', a prefix vouch reserves for what it measures itself"))
      << r.out;
  auto rec = Json("r/record.json");
  ASSERT_EQ(rec["legs"].size(), 1u);
  const json& leg = rec["legs"][0];
  EXPECT_EQ(leg["valid"], false);
  EXPECT_TRUE(
      Has(leg["metrics_error"].get<std::string>(), "metrics.jsonl:2: metric 'vouch.wall_s'"))
      << leg["metrics_error"];
  // Only vouch's own figures: one vouch.wall_s, from vouch, and never the leg's 1.
  auto wall = MetricsNamed(leg, "vouch.wall_s");
  ASSERT_EQ(wall.size(), 1u) << leg["metrics"];
  EXPECT_EQ(wall[0]["source"], "vouch");
  EXPECT_NE(wall[0]["value"], 1.0);
  auto status = MetricsNamed(leg, "vouch.exit_status");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0]["value"], 0.0);
  EXPECT_TRUE(MetricsNamed(leg, "tok_s").empty()) << "a leg refused gives no figures";

  // gpu.* likewise, on any line and in any case.
  Script("leg2.sh",
         "sleep 0.8\n"
         "echo '{\"name\":\"tok_s\",\"value\":100}' >> \"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"note\",\"text\":\"x\"}' >> \"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"GPU.active_ns\",\"value\":1}' >> \"$VOUCH_METRICS\"\n");
  auto g = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r2 -- ./leg2.sh", kFast));
  EXPECT_EQ(g.rc, 1) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "legs/001-run-measured/metrics.jsonl:3: metric 'GPU.active_ns' is "
                  "under 'gpu.*'"))
      << g.out;
  EXPECT_EQ(Json("r2/record.json")["legs"][0]["valid"], false);
}

// A known tool's file naming a reserved metric (a hyperfine -n gpu.active_ns) is refused the
// same way, naming the file and the --metric spec.
TEST_F(ForgeNamesCli, AToolFileThatNamesAReservedMetricIsRefused) {
  std::ofstream(D("hf_src.json"))
      << R"({"results":[{"command":"gpu.active_ns","mean":1e-9,"times":[1e-9],"exit_codes":[0]}]})";
  Script("leg.sh", "sleep 0.8\ncp hf_src.json hf.json\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric hyperfine:hf.json -- ./leg.sh", kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, fmt::format("hyperfine {} (hyperfine:hf.json): metric "
                                     "'gpu.active_ns.mean' is under 'gpu.*'",
                                     D("hf.json"))))
      << r.out;
  auto rec = Json("r/record.json");
  ASSERT_EQ(rec["legs"].size(), 1u);
  EXPECT_EQ(rec["legs"][0]["valid"], false);
  EXPECT_TRUE(MetricsNamed(rec["legs"][0], "gpu.active_ns.mean").empty());
}

// regex: and json: extractors define their name on the command line: a reserved one is a
// usage error before any leg runs, as is requiring one from a source (#vouch.wall_s).
TEST_F(ForgeNamesCli, AnExtractorUnderAReservedNameIsRefusedBeforeAnyLeg) {
  Script("leg.sh", "echo 'active 1'\n");
  auto re = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric 'regex:gpu.active_ns:ns:lower:active ([0-9]+)' "
      "-- ./leg.sh",
      kFast));
  EXPECT_EQ(re.rc, 64) << re.out;
  EXPECT_TRUE(Has(re.out,
                  "metric spec 'regex:gpu.active_ns:ns:lower:active ([0-9]+)': metric "
                  "'gpu.active_ns' is under 'gpu.*'"))
      << re.out;
  EXPECT_FALSE(fs::exists(D("r/legs"))) << "no leg ran";
  auto js = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric 'json@o.json:vouch.wall_s:s:lower:/t' -- "
      "./leg.sh",
      kFast));
  EXPECT_EQ(js.rc, 64) << js.out;
  EXPECT_TRUE(Has(js.out, "metric 'vouch.wall_s' is under 'vouch.*'")) << js.out;
  auto req = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --metric 'channel#gpu.kernels' -- ./leg.sh", kFast));
  EXPECT_EQ(req.rc, 64) << req.out;
  EXPECT_TRUE(Has(req.out, "'gpu.kernels' is vouch's own figure")) << req.out;
  EXPECT_FALSE(fs::exists(D("r/legs"))) << "no leg ran";
}

// Class 10: `hyperfine -L ms 10,50 -n decode` names both results `decode`; by position they
// were decode and decode[2], so the same sweep in the other order gated unchanged figures as
// +300 % FAIL. Keyed by hyperfine's "parameters": decode[ms=10], decode[ms=50].
TEST_F(ForgeNamesCli, AHyperfineSweepInTheOtherOrderGatesUnchanged) {
  json fwd = json::parse(std::ifstream(kMetricsData + "/hyperfine_sweep.json"));
  // Its `system` times are 0 (sleep), which no percentage can gate: left out.
  for (auto& r : fwd["results"]) r.erase("system");
  json rev = fwd;
  std::reverse(rev["results"].begin(), rev["results"].end());  // the same figures, 50 then 10
  std::ofstream(D("fwd.json")) << fwd.dump(2);
  std::ofstream(D("rev.json")) << rev.dump(2);
  Script("leg.sh", "sleep 0.8\ncp \"$(cat order)\" hf.json\n");
  std::ofstream(D("order")) << "fwd.json";
  auto b = Vouch(fmt::format(
      "baseline {} --trials 2 --metric hyperfine:hf.json --baseline base.json -- ./leg.sh", kFast));
  ASSERT_EQ(b.rc, 0) << b.out;
  json base = json::parse(std::ifstream(D("base.json")));
  EXPECT_EQ(base["headline"], "decode[ms=10].mean");
  std::set<std::string> names;
  for (const auto& m : base["metrics"]) names.insert(m["name"].get<std::string>());
  EXPECT_TRUE(names.count("decode[ms=50].mean")) << base["metrics"];
  EXPECT_FALSE(names.count("decode[2].mean")) << base["metrics"];

  std::ofstream(D("order"), std::ios::trunc) << "rev.json";
  auto gate =
      Vouch(fmt::format("gate {} --baseline base.json --fail-pct 5 --warmup 0 --reps 2 --out g "
                        "--metric hyperfine:hf.json -- ./leg.sh",
                        kFast));
  EXPECT_EQ(gate.rc, 0) << gate.out;
  auto rec = Json("g/record.json");
  bool saw = false;
  for (const auto& s : rec["summary"]["run"])
    if (s["name"] == "decode[ms=10].mean") {
      saw = true;
      EXPECT_EQ(s["median"], fwd["results"][0]["mean"]);
    }
  EXPECT_TRUE(saw) << rec["summary"];
}

}  // namespace
}  // namespace vouch
