#include "fleet/slurm.h"

#include <gtest/gtest.h>

#include <map>

#include "fleet/evidence.h"
#include "fleet/plan.h"

namespace vouch {
namespace {

TEST(FleetSlurm, SbatchIsOneArrayOfWholeNodes) {
  SlurmOptions o;
  o.partition = "gpu";
  o.gres = "gpu:2";
  o.time = "00:10:00";
  o.extra = {"--qos=high"};
  auto a = SbatchArgv(o, "vouch-fleet-ab", 4, "/d/slurm/%A_%a.out", "/d/slurm/round-0.sh");
  std::vector<std::string> want = {
      "sbatch",          "--parsable",         "--job-name=vouch-fleet-ab",
      "--array=0-3",     "--nodes=1",          "--ntasks=1",
      "--exclusive",     "--requeue",          "--output=/d/slurm/%A_%a.out",
      "--partition=gpu", "--gres=gpu:2",       "--time=00:10:00",
      "--qos=high",      "/d/slurm/round-0.sh"};
  EXPECT_EQ(a, want);
}

TEST(FleetSlurm, JobIdFromParsableOutput) {
  EXPECT_EQ(*ParseSbatchJobId("123\n"), "123");
  EXPECT_EQ(*ParseSbatchJobId("sbatch: warning: x\n4567;cluster\n"), "4567");
  EXPECT_FALSE(ParseSbatchJobId("sbatch: error: Batch job submission failed"));
  EXPECT_FALSE(ParseSbatchJobId(""));
}

TEST(FleetSlurm, ScontrolLinesArrayRangesAndStates) {
  std::string text =
      "JobId=12 ArrayJobId=10 ArrayTaskId=2 JobState=FAILED Reason=NonZeroExitCode Restarts=1 "
      "ExitCode=9:0 NodeList=n3\n"
      "JobId=10 ArrayJobId=10 ArrayTaskId=3-5,7%2 JobState=PENDING Reason=Resources Restarts=0 "
      "ExitCode=0:0 NodeList=(null)\n"
      "garbage line\n";
  auto t = ParseScontrolJobs(text);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].array_job_id, "10");
  EXPECT_EQ(t[0].task, 2);
  EXPECT_EQ(t[0].state, "FAILED");
  EXPECT_EQ(t[0].exit_code, "9:0");
  EXPECT_EQ(t[0].restarts, 1);
  EXPECT_EQ(t[0].node, "n3");
  EXPECT_EQ(t[1].task, 3);
  EXPECT_EQ(t[4].task, 7);
  EXPECT_EQ(t[4].node, "");
  EXPECT_TRUE(SlurmStateFinal("FAILED"));
  EXPECT_TRUE(SlurmStateFinal("NODE_FAIL"));
  EXPECT_TRUE(SlurmStateFinal("PREEMPTED"));
  EXPECT_FALSE(SlurmStateFinal("PENDING"));
  EXPECT_FALSE(SlurmStateFinal("REQUEUED"));
  EXPECT_FALSE(SlurmStateFinal("COMPLETING"));
  // A hostile range neither hangs nor explodes.
  EXPECT_EQ(ParseScontrolJobs("JobId=1 ArrayJobId=1 ArrayTaskId=0-999999999 JobState=PENDING")
                .front()
                .task,
            -1);
}

TEST(FleetSlurm, SacctRowsSkipSteps) {
  auto t = ParseSacct(
      "10_0|COMPLETED|0:0|n1|None\n10_0.batch|COMPLETED|0:0|n1|\n10_1|CANCELLED by 0|0:15|n2|\n"
      "10_[2-3]|PENDING|0:0|None assigned|Resources\n");
  ASSERT_EQ(t.size(), 2u);  // the bracketed pending range is not a task list sacct prints per task
  EXPECT_EQ(t[1].state, "CANCELLED");
  EXPECT_EQ(t[1].node, "n2");
}

TEST(FleetSlurm, GpusFromSlurmEnvironment) {
  std::map<std::string, std::string> env;
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_FALSE(GpusFromSlurm(get));
  env["SLURM_JOB_GPUS"] = "2,3";
  EXPECT_EQ(GpusFromSlurm(get)->cuda_visible_devices, "2,3");
  EXPECT_EQ(GpusFromSlurm(get)->source, "SLURM_JOB_GPUS");
  env["SLURM_STEP_GPUS"] = "3";
  EXPECT_EQ(GpusFromSlurm(get)->cuda_visible_devices, "3");  // the step's own, first
  env["CUDA_VISIBLE_DEVICES"] = "0";
  EXPECT_EQ(GpusFromSlurm(get)->cuda_visible_devices, "0");
  EXPECT_EQ(GpusFromSlurm(get)->source, "CUDA_VISIBLE_DEVICES (set by Slurm)");
}

TEST(FleetPlan, BlocksSplitEvenlyAndNeverAcrossNodes) {
  EXPECT_EQ(*SplitBlocks(16, 4), (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(*SplitBlocks(14, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(*SplitBlocks(5, 3), (std::vector<int>{1, 1, 1}));  // 5 pairs: 3 whole blocks
  auto few = SplitBlocks(4, 3);
  ASSERT_FALSE(few);
  EXPECT_NE(few.error().message.find("give --pairs 6 or more"), std::string::npos);
  EXPECT_NE(TaskSeed(1, 0, 0), TaskSeed(1, 0, 1));
  EXPECT_EQ(TaskSeed(1, 0, 1), TaskSeed(1, 0, 1));
}

TEST(FleetPlan, JsonRoundTripAndHostileValues) {
  FleetPlan p;
  p.kind = FleetKind::kGate;
  p.node_args = {"--reps", "3"};
  p.command = {"./bench"};
  p.nodes = 2;
  p.baseline = "/b";
  p.vouch_binary = "/v";
  p.rounds.push_back({"7", 1.5, {{"r0-t0", 0, 0, ""}, {"r0-t1", 0, 0, ""}}});
  auto back = FleetPlanFromJson(FleetPlanToJson(p), "x");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->kind, FleetKind::kGate);
  EXPECT_EQ(back->rounds[0].tasks[1].id, "r0-t1");
  EXPECT_EQ(FindTask(*back, "7", 1, 0)->id, "r0-t1");
  EXPECT_FALSE(FindTask(*back, "8", 1, 0));
  EXPECT_FALSE(FindTask(*back, "7", 2, 0));
  auto j = FleetPlanToJson(p);
  j["rounds"][0]["tasks"][0]["blocks"] = "many";
  auto bad = FleetPlanFromJson(j, "plan.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("plan.json: malformed fleet plan"), std::string::npos);
  EXPECT_FALSE(SafeNodeName("../etc"));
  EXPECT_FALSE(SafeNodeName(""));
  EXPECT_TRUE(SafeNodeName("gpu-node07.cluster"));
  EXPECT_EQ(ParseAttemptDir("r1-t12-a3")->first, "r1-t12");
  EXPECT_EQ(ParseAttemptDir("r1-t12-a3")->second, 3);
  EXPECT_FALSE(ParseAttemptDir("r1-t-a3"));
  EXPECT_FALSE(ParseAttemptDir("evil"));
}

}  // namespace
}  // namespace vouch
