// Serving results through the real binary on the simulated device: a vllm gate over a healthy
// server (no failed request) passes unchanged and warns on one failed request (the counts are
// compared absolutely: gate/gate_count.h).
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

}  // namespace
}  // namespace vouch
