// Several GPUs through the real binary, on the simulated two-GPU device (tests/data/sim):
// one window per GPU, CUDA_VISIBLE_DEVICES respected, an idle GPU judged per GPU and named,
// pairing GPU by GPU, and arms on different GPUs refused before any leg runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kSim = VOUCH_SOURCE_DIR "/tests/data/sim/";
const std::string kBoth = kSim + "h200x2_busy.jsonl";
const std::string kGpu0Idle = kSim + "h200x2_gpu0_idle.jsonl";
const std::string kGpu1Slow = kSim + "h200x2_gpu1_slow2pct.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

using testing_util::Has;
using Res = testing_util::ShellResult;

class MultiGpuCli : public testing_util::ScratchDirTest {
 protected:
  // ENV goes before the binary (e.g. CUDA_VISIBLE_DEVICES=1).
  Res Vouch(const std::string& args, const std::string& sim, const std::string& env = "") const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {} {}",
                                           D(), D(), sim, env, VOUCH_BINARY, args));
  }
  static std::vector<std::string> Statuses(const nlohmann::json& window) {
    std::vector<std::string> out;
    for (const auto& g : window["gpus"]) out.push_back(g["verdict"]["status"]);
    return out;
  }
};

TEST_F(MultiGpuCli, DoctorShowsBothGpusAndChecksOnlyTheOnesToMeasure) {
  auto r = Vouch("doctor", kBoth);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "GPU 0: NVIDIA H200 (simulated) GPU-SIMULATED-0")) << r.out;
  EXPECT_TRUE(Has(r.out, "GPU 1: NVIDIA H200 (simulated) GPU-SIMULATED-1")) << r.out;
  EXPECT_TRUE(Has(r.out, "GPUs to measure on: 0,1 (all GPUs (none named))")) << r.out;

  // Another job on GPU 0: not fit for a run on both, fit for a run limited to GPU 1.
  fs::copy_file(kBoth, D("s.jsonl"));
  std::ofstream(D("s.jsonl.static.json"))
      << R"({"processes":{"0":[{"pid":4242,"name":"other-job"}]}})";
  auto all = Vouch("doctor", D("s.jsonl"));
  EXPECT_EQ(all.rc, 1) << all.out;
  EXPECT_TRUE(Has(all.out, "NOT FIT: GPU 0 is busy: compute process 4242 (other-job)")) << all.out;
  auto one = Vouch("doctor", D("s.jsonl"), "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(Has(one.out, "GPUs to measure on: 1 (CUDA_VISIBLE_DEVICES=1)")) << one.out;
  EXPECT_TRUE(Has(one.out,
                  "warning: GPU 0 is busy: compute process 4242 (other-job) holds memory (not a "
                  "GPU to measure on: CUDA_VISIBLE_DEVICES=1)"))
      << one.out;
  auto bad = Vouch("doctor", kBoth, "CUDA_VISIBLE_DEVICES=3");
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out, "NOT FIT: CUDA_VISIBLE_DEVICES='3' leaves the command no GPU"))
      << bad.out;
}

TEST_F(MultiGpuCli, ClockSampleWritesOneWindowPerGpuAndPairsGpuByGpu) {
  auto a = Vouch(fmt::format("clock sample {} --quiet --out a -- sleep 1", kFast), kBoth);
  ASSERT_EQ(a.rc, 0) << a.out;
  auto wa = Json("a/window.json");
  ASSERT_EQ(wa["gpus"].size(), 2u);
  EXPECT_EQ(wa["gpus"][0]["fold"]["gpu"], 0);
  EXPECT_EQ(wa["gpus"][1]["fold"]["gpu"], 1);
  EXPECT_EQ(Statuses(wa), (std::vector<std::string>{"valid", "valid"}));
  EXPECT_GT(wa["gpus"][1]["fold"]["busy_readings"].get<int>(), 5);

  auto b = Vouch(fmt::format("clock sample {} --quiet --out b -- sleep 1", kFast), kGpu1Slow);
  ASSERT_EQ(b.rc, 0) << b.out;
  auto same = Vouch("clock pair a/window.json a/window.json", kBoth);
  EXPECT_EQ(same.rc, 0) << same.out;
  EXPECT_TRUE(Has(same.out, "GPU 1: SM clock mean offset")) << same.out;
  auto pair = Vouch("clock pair a/window.json b/window.json", kBoth);
  EXPECT_EQ(pair.rc, 3) << pair.out;
  EXPECT_TRUE(Has(pair.out, "GPU 1: SM clock median offset <= 1.00 %")) << pair.out;
  // GPU 0 paired and GPU 1 did not: the text says which.
  auto j = Vouch("clock pair --json a/window.json b/window.json", kBoth);
  auto v = nlohmann::json::parse(j.out.substr(j.out.find('{')));
  int gpu0_failed = 0, gpu1_failed = 0;
  for (const auto& r : v["rules"]) {
    std::string name = r["rule"];
    if (!r["pass"].get<bool>()) (name.rfind("GPU 0:", 0) == 0 ? gpu0_failed : gpu1_failed)++;
  }
  EXPECT_EQ(gpu0_failed, 0) << j.out;
  EXPECT_EQ(gpu1_failed, 2) << j.out;  // median and mean
}

TEST_F(MultiGpuCli, AClockLockCoversEveryGpuOfTheWindowAndIsReset) {
  // Simulated only: the clocks of a real, shared GPU are never touched by the tests.
  auto r = Vouch(
      fmt::format("clock sample {} --quiet --lock-clocks 1500 --out w -- sleep 1", kFast), kBoth);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto w = Json("w/window.json");
  EXPECT_EQ(w["gpus"][0]["fold"]["sm_mhz"]["median"], 1500);
  EXPECT_EQ(w["gpus"][1]["fold"]["sm_mhz"]["median"], 1500);
  EXPECT_TRUE(Has(w["caveats"].dump(), "locked at 1500 MHz")) << w.dump();
  // Only the GPU the leg may use is locked.
  auto one =
      Vouch(fmt::format("clock sample {} --quiet --lock-clocks 1500 --out o -- sleep 1", kFast),
            kBoth, "CUDA_VISIBLE_DEVICES=1");
  ASSERT_EQ(one.rc, 0) << one.out;
  auto o = Json("o/window.json");
  ASSERT_EQ(o["gpus"].size(), 1u);
  EXPECT_EQ(o["gpus"][0]["static"]["index"], 1);
  EXPECT_EQ(o["gpus"][0]["fold"]["sm_mhz"]["median"], 1500);
}

TEST_F(MultiGpuCli, RunRecordsOneWindowPerGpu) {
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 2 --out r -- sleep 0.8", kFast), kBoth);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "SM median GPU 0 1980 MHz, GPU 1 1980 MHz")) << r.out;
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["environment"]["gpu_selection"]["source"], "all GPUs (none named)");
  EXPECT_EQ(rec["environment"]["gpus"].size(), 2u);
  for (const auto& l : rec["legs"]) {
    ASSERT_EQ(l["window"]["gpus"].size(), 2u);
    EXPECT_EQ(Statuses(l["window"]), (std::vector<std::string>{"valid", "valid"}));
    EXPECT_TRUE(fs::exists(D("r/" + l["dir"].get<std::string>() + "/window.json")));
  }
  bool per_gpu_metric = false;
  for (const auto& m : rec["legs"][0]["metrics"])
    if (m["name"] == "vouch.gpu1_busy_fraction") per_gpu_metric = m["value"].get<double>() > 0.9;
  EXPECT_TRUE(per_gpu_metric) << rec["legs"][0]["metrics"].dump();
}

TEST_F(MultiGpuCli, ALegLimitedToGpu1SamplesGpu1) {
  for (const std::string& how : {std::string("env CUDA_VISIBLE_DEVICES=1"),
                                 std::string("env CUDA_VISIBLE_DEVICES=GPU-SIM")}) {
    SCOPED_TRACE(how);
    fs::remove_all(D("r"));
    // GPU 0 of this stream never works: a leg that sampled it would be refused or note it.
    auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- sleep 0.8", kFast), kGpu0Idle,
                   how);
    if (how.find("GPU-SIM") != std::string::npos) {
      // "GPU-SIM" matches both simulated UUIDs: CUDA would see no GPU, and vouch refuses.
      EXPECT_EQ(r.rc, 64) << r.out;
      EXPECT_TRUE(Has(r.out, "matches the UUIDs of GPUs 0,1")) << r.out;
      continue;
    }
    ASSERT_EQ(r.rc, 0) << r.out;
    auto rec = Json("r/record.json");
    const auto& w = rec["legs"][0]["window"];
    ASSERT_EQ(w["gpus"].size(), 1u);
    EXPECT_EQ(w["gpus"][0]["static"]["index"], 1);
    EXPECT_EQ(w["gpus"][0]["static"]["uuid"], "GPU-SIMULATED-1");
    EXPECT_EQ(w["gpu_source"], "CUDA_VISIBLE_DEVICES=1");
    EXPECT_EQ(rec["environment"]["variables"]["CUDA_VISIBLE_DEVICES"], "1");
    const std::string reproduce = rec["recipe"]["reproduce"].get<std::string>();
    EXPECT_TRUE(Has(reproduce, " && CUDA_VISIBLE_DEVICES=1 ")) << reproduce;
    EXPECT_TRUE(Has(reproduce, " vouch --sim ")) << reproduce;
    EXPECT_TRUE(Has(r.out, "GPUs sampled: 1 (CUDA_VISIBLE_DEVICES=1)")) << r.out;
  }
  // The same through the leg's own environment, and by full UUID.
  auto e = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out e --env "
                             "CUDA_VISIBLE_DEVICES=GPU-SIMULATED-1 -- sleep 0.8",
                             kFast),
                 kGpu0Idle);
  ASSERT_EQ(e.rc, 0) << e.out;
  auto w = Json("e/record.json")["legs"][0]["window"];
  ASSERT_EQ(w["gpus"].size(), 1u);
  EXPECT_EQ(w["gpus"][0]["static"]["index"], 1);
  // --gpu wins over the variable, with a warning that the two disagree.
  auto g = Vouch(fmt::format("run {} --warmup 0 --reps 1 --gpu 1 --out g --env "
                             "CUDA_VISIBLE_DEVICES=0 -- sleep 0.8",
                             kFast),
                 kGpu0Idle);
  ASSERT_EQ(g.rc, 0) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "warning: vouch samples GPU(s) 1 (--gpu), but CUDA_VISIBLE_DEVICES='0' "
                  "lets the command use GPU(s) 0"))
      << g.out;
}

TEST_F(MultiGpuCli, AnIdleGpuIsJudgedPerGpuAndNamed) {
  // Nothing named: GPU 0 sat idle, so it is recorded as unused and the leg stands on GPU 1.
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- sleep 0.8", kFast), kGpu0Idle);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "SM median GPU 0 idle, GPU 1 1980 MHz")) << r.out;
  auto w = Json("r/record.json")["legs"][0]["window"];
  EXPECT_EQ(Statuses(w), (std::vector<std::string>{"unused", "valid"}));
  EXPECT_TRUE(Has(w["verdict"]["notes"].dump(), "GPU 0 sat idle throughout")) << w.dump();
  auto show = Vouch("show r", kGpu0Idle);
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_TRUE(Has(show.out, "GPU 0 unused; GPU 1 SM median 1980")) << show.out;

  // Both GPUs named: the idle one refuses the leg, and the reason says which GPU it was.
  auto n = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out n -- sleep 0.8", kFast), kGpu0Idle,
                 "CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_EQ(n.rc, 1) << n.out;
  EXPECT_TRUE(Has(n.out, "no valid measured leg")) << n.out;
  auto rec = Json("n/record.json");
  const auto& l = rec["legs"][0];
  EXPECT_FALSE(l["valid"].get<bool>());
  EXPECT_EQ(Statuses(l["window"]), (std::vector<std::string>{"idle", "valid"}));
  std::string reasons = l["reasons"].dump();
  EXPECT_TRUE(Has(reasons, "GPU 0 sat idle for the whole window")) << reasons;
  EXPECT_TRUE(Has(reasons, "although CUDA_VISIBLE_DEVICES=0,1 names it")) << reasons;
  EXPECT_FALSE(Has(reasons, "GPU 1")) << reasons;
  auto check = Vouch("clock check n/" + l["dir"].get<std::string>() + "/window.json", kGpu0Idle);
  EXPECT_EQ(check.rc, 3) << check.out;
  EXPECT_TRUE(Has(check.out, "GPU 0 NVIDIA H200 (simulated) (GPU-SIMULATED-0): IDLE")) << check.out;
}

TEST_F(MultiGpuCli, AnotherJobOnAGpuTheLegCannotSeeDoesNotRefuseTheRun) {
  fs::copy_file(kBoth, D("s.jsonl"));
  std::ofstream(D("s.jsonl.static.json"))
      << R"({"processes":{"0":[{"pid":4242,"name":"other-job"}]}})";
  auto all = Vouch("run --warmup 0 --reps 1 --out a -- sleep 0.5", D("s.jsonl"));
  EXPECT_EQ(all.rc, 1) << all.out;
  EXPECT_TRUE(Has(all.out, "preflight refused: GPU 0 is busy: compute process 4242 (other-job)"))
      << all.out;
  auto one = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out o -- sleep 0.8", kFast),
                   D("s.jsonl"), "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(one.rc, 0) << one.out;
  EXPECT_EQ(Json("o/record.json")["preflight"]["busy_processes"].size(), 0u);
}

TEST_F(MultiGpuCli, ACudaVisibleDevicesThatLeavesNoGpuIsAUsageError) {
  auto r = Vouch("run --warmup 0 --reps 1 --out r -- sleep 0.1", kBoth, "CUDA_VISIBLE_DEVICES=5");
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "CUDA_VISIBLE_DEVICES='5' leaves the command no GPU: entry '5' is not a "
                  "GPU here (GPUs 0..1)"))
      << r.out;
  EXPECT_FALSE(fs::exists(D("r")));
  auto e = Vouch("clock sample --quiet --out c -- sleep 0.1", kBoth, "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(e.rc, 64) << e.out;
  EXPECT_TRUE(Has(e.out, "set but empty")) << e.out;
  auto m = Vouch("run --out m --env CUDA_VISIBLE_DEVICES=MIG-1234 -- sleep 0.1", kBoth);
  EXPECT_EQ(m.rc, 64) << m.out;
  EXPECT_TRUE(Has(m.out, "names a MIG instance")) << m.out;
}

TEST_F(MultiGpuCli, AbArmsOnDifferentGpusAreRefusedBeforeAnyLeg) {
  auto r = Vouch(
      "ab --a-env CUDA_VISIBLE_DEVICES=0 --b-env CUDA_VISIBLE_DEVICES=1 --pairs 4 "
      "--out r -- sleep 0.1",
      kBoth);
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "arm A would run on GPU(s) 0 (CUDA_VISIBLE_DEVICES=0) and arm B on GPU(s) "
                  "1 (CUDA_VISIBLE_DEVICES=1): windows on different GPUs never pair"))
      << r.out;
  EXPECT_FALSE(fs::exists(D("r/legs")));
}

}  // namespace
}  // namespace vouch
