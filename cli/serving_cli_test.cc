// Serving results through the real binary on the simulated device: a vllm gate over a healthy
// server (no failed request) passes unchanged and warns on one failed request (the counts are
// compared absolutely: gate/gate_count.h); a percentile the request count cannot support is no
// figure; a saturated run's latencies are refused. And Google Benchmark's CSV and console
// outputs are named, with the flag that gives JSON.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
const std::string kData = VOUCH_SOURCE_DIR "/tests/data/metrics/";
constexpr const char* kFast = "--min-busy-readings 5";

using testing_util::Has;
using Res = testing_util::ShellResult;

class ServingCli : public testing_util::ScratchDirTest {
 protected:
  // A leg that "runs" vllm bench serve: it copies the result file $RESULT (a fixture name)
  // to result.json.
  void SetUp() override {
    ScratchDirTest::SetUp();
    Script("serve.sh", fmt::format("sleep 0.7\ncp {}$RESULT result.json\n", kData));
  }
  Res Vouch(const std::string& args, const std::string& env = "") const {
    return testing_util::Shell(fmt::format("cd {} && {} VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}",
                                           D(), env, D(), kBusy, VOUCH_BINARY, args));
  }
};

TEST_F(ServingCli, AnUnchangedVllmGateWithNoFailedRequestPassesAndOneFailedRequestWarns) {
  const std::string healthy = "RESULT=vllm_bench_serve_0_failed.json";
  auto b = Vouch(fmt::format("baseline {} --trials 3 --metric vllm:result.json --headline "
                             "output_throughput --baseline base.json -- ./serve.sh",
                             kFast),
                 healthy);
  ASSERT_EQ(b.rc, 0) << b.out;
  auto base = Json("base.json");
  bool pinned = false;
  for (const auto& m : base["metrics"])
    if (m["name"] == "failed") pinned = m["value"] == 0 && m["unit"] == "count";
  ASSERT_TRUE(pinned) << base.dump();

  const std::string gate = fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 3 --metric vllm:result.json", kFast);
  auto same = Vouch(gate + " --out same -- ./serve.sh", healthy);
  EXPECT_EQ(same.rc, 0) << same.out;
  EXPECT_TRUE(Has(same.out, "gate: pass")) << same.out;
  EXPECT_TRUE(Has(same.out, "pass (0 -> 0: compared as a count)")) << same.out;
  EXPECT_FALSE(Has(same.out, "ERROR")) << same.out;

  // The same server with one failed request of 200 (the project's fixture): a warning.
  auto one = Vouch(gate + " --out one -- ./serve.sh", "RESULT=vllm_bench_serve.json");
  EXPECT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(Has(one.out, "gate: warn")) << one.out;
  EXPECT_TRUE(Has(one.out, "+1 (count)")) << one.out;
  EXPECT_TRUE(Has(one.out, "0 -> 1: a count of 0 warns on any increase")) << one.out;

  // A count threshold the user sets: more than 0 more failed requests fails.
  auto strict = Vouch("gate --baseline base.json --fail-count 0 one");
  EXPECT_EQ(strict.rc, 1) << strict.out;
  EXPECT_TRUE(Has(strict.out, "0 -> 1: beyond the count threshold of 0")) << strict.out;
  EXPECT_EQ(Vouch("gate --baseline base.json --fail-count 1 one").rc, 0);
  EXPECT_TRUE(Has(Vouch("gate --help").out, "--fail-count"));
}

// 50 requests cannot support a p99: it is not in the run's summary, the baseline or the gate,
// and its line states the bound the data does support, from the per-request times.
TEST_F(ServingCli, AFiftyRequestP99IsNoFigureAndItsBoundIsStated) {
  const std::string env = "RESULT=../serving/vllm_serve_50_detailed.json";
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --metric vllm:result.json --out r -- "
                             "./serve.sh",
                             kFast),
                 env);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "p99 of 50 completed requests is not a figure (p99_e2el_ms, p99_itl_ms, "
                  "p99_tpot_ms, p99_ttft_ms not quoted): a p99 at 99 % confidence needs at least "
                  "459 requests; the slowest of 50 bounds p91.2 at 99 % (and the p99 at only "
                  "39.5 %): e2el <= 3969.5 ms, tpot <= 30.555 ms, ttft <= 131.03 ms"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "126.6")) << r.out;  // numpy's p99 of the 50 TTFTs (126.67 ms)
  EXPECT_FALSE(Has(r.out, "126.7")) << r.out;
  auto b = Vouch(fmt::format("baseline {} --trials 2 --metric vllm:result.json --headline "
                             "output_throughput --baseline base.json -- ./serve.sh",
                             kFast),
                 env);
  ASSERT_EQ(b.rc, 0) << b.out;
  auto base = Json("base.json");
  for (const auto& m : base["metrics"])
    EXPECT_NE(m["name"].get<std::string>().substr(0, 4), "p99_") << m.dump();
  EXPECT_TRUE(Has(base["metrics"].dump(), "median_ttft_ms"));
  auto g = Vouch(fmt::format("gate {} --baseline base.json --warmup 0 --reps 2 --metric "
                             "vllm:result.json -- ./serve.sh",
                             kFast),
                 env);
  EXPECT_EQ(g.rc, 0) << g.out;
  EXPECT_TRUE(Has(g.out, "\nmedian_ttft_ms ")) << g.out;  // a row of the table
  EXPECT_FALSE(Has(g.out, "\np99_")) << g.out;
}

// 600 requests offered at 32 req/s to a server that serves about 16: the run outlasts its
// schedule, so its latencies measure the queue; its throughputs stay.
TEST_F(ServingCli, ASaturatedRunsLatenciesAreRefusedWithTheReason) {
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --metric vllm:result.json --out r -- "
                             "./serve.sh",
                             kFast),
                 "RESULT=../serving/vllm_serve_saturated.json");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "serving (leg 1): load saturated: offered 32 req/s, achieved 15.4 req/s: the "
                  "run took 39.1 s where its schedule of 600 requests and one request's 10.3 s "
                  "take 29 s (more than 12 % longer): requests queued; its latencies are not "
                  "figures (mean_e2el_ms, "))
      << r.out;
  auto rec = Json("r/record.json");
  const std::string leg = rec["legs"][0]["metrics"].dump();
  EXPECT_FALSE(Has(leg, "\"mean_ttft_ms\"")) << leg;
  EXPECT_FALSE(Has(leg, "\"p99_e2el_ms\"")) << leg;
  EXPECT_TRUE(Has(leg, "\"output_throughput\"")) << leg;
  EXPECT_TRUE(Has(leg, "saturated: offered 32 req/s")) << leg;  // the serving_load text
  // The healthy fixture's load is valid: its latencies stay.
  auto ok = Vouch(fmt::format("run {} --warmup 0 --reps 1 --metric vllm:result.json --out ok -- "
                              "./serve.sh",
                              kFast),
                  "RESULT=vllm_bench_serve_0_failed.json");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_FALSE(Has(ok.out, "load saturated")) << ok.out;
  EXPECT_TRUE(Has(Json("ok/record.json")["legs"][0]["metrics"].dump(), "\"mean_ttft_ms\""));
}

TEST_F(ServingCli, GoogleBenchmarkCsvAndConsoleOutputsSayToUseJson) {
  for (const auto& [file, what] :
       {std::pair<std::string, std::string>{"gbench_console.txt", "console output"},
        {"gbench.csv", "CSV output (--benchmark_format=csv)"}}) {
    Script("gb.sh", fmt::format("sleep 0.7\ncat {}{}\n", kData, file));
    auto r = Vouch(
        fmt::format("run {} --warmup 0 --reps 1 --metric gbench --out {} -- ./gb.sh", kFast, file));
    EXPECT_NE(r.rc, 0) << r.out;
    EXPECT_TRUE(Has(r.out, "this is Google Benchmark's " + what)) << r.out;
    EXPECT_TRUE(Has(r.out, "run the benchmark with --benchmark_format=json")) << r.out;
    EXPECT_FALSE(Has(r.out, "parse error")) << r.out;
  }
}

}  // namespace
}  // namespace vouch
