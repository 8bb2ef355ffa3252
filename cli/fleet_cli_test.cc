// vouch fleet on a REAL Slurm cluster (scripts/slurm/start.sh: slurmctld, munge and one slurmd
// per node on this machine), running the real binary on the simulated device, each node with
// its own recorded stream (VOUCH_SIM=.../sim-%n.jsonl). scripts/test.sh starts the cluster and
// sets SLURM_CONF and VOUCH_REQUIRE_SLURM=1: then a missing cluster FAILS these tests. Without
// VOUCH_REQUIRE_SLURM (a developer without Slurm) they are skipped, saying why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;
const std::string kSim = VOUCH_SOURCE_DIR "/tests/data/sim/";

class FleetCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    const char* conf = std::getenv("SLURM_CONF");
    const char* require = std::getenv("VOUCH_REQUIRE_SLURM");
    bool required = require && *require && std::string(require) != "0";
    std::string why;
    if (!conf || !*conf)
      why = "SLURM_CONF is not set (scripts/slurm/start.sh starts a local cluster)";
    else if (!fs::exists(conf))
      why = fmt::format("SLURM_CONF={} does not exist", conf);
    else if (auto s = testing_util::Shell("sinfo -h -o %D 2>&1"); s.rc != 0)
      why = "sinfo fails: " + s.out;
    if (!why.empty()) {
      if (required) FAIL() << "VOUCH_REQUIRE_SLURM is set but there is no cluster: " << why;
      GTEST_SKIP() << why << " (set VOUCH_REQUIRE_SLURM=1 to make this a failure)";
    }
    // Every node replays the busy H200 stream, but n3 (of partition ab) replays the one 2 %
    // lower in SM clock. Each test has its own partition (scripts/slurm/start.sh).
    for (int i = 1; i <= 12; ++i)
      fs::copy_file(kSim + (i == 3 ? "h200_copy_busy_slow2pct.jsonl" : "h200_copy_busy.jsonl"),
                    D(fmt::format("sim-n{}.jsonl", i)));
    // A leg: tok_s = SPEED x (1 +- 0.2 % noise); on $ODDNODE arm B's gain is ODDSPEED instead;
    // on $FAILNODE the vouch running the legs is killed (kill -9) at leg $FAILAT, once: a
    // node lost mid-run.
    Script(
        "leg.sh",
        "sleep 0.4\n"
        "node=${SLURMD_NODENAME:-none}\n"
        "n=$(cat count-$node 2>/dev/null | wc -l); echo x >> count-$node\n"
        "if [ \"$node\" = \"$FAILNODE\" ] && [ \"$n\" -ge \"${FAILAT:-99}\" ] && [ ! -e failed ]; "
        "then touch failed; kill -9 $PPID; sleep 5; fi\n"
        "if [ \"$node\" = \"$ODDNODE\" ] && [ -n \"$ODDSPEED\" ]; then SPEED=$ODDSPEED; fi\n"
        "f=1; [ \"$node\" = \"$SLOWNODE\" ] && f=0.95\n"
        "v=$(awk -v s=\"$SPEED\" -v f=$f -v r=\"$(od -An -N2 -tu2 /dev/urandom)\" "
        "'BEGIN{printf \"%.5f\", s*f*(1+(r/65535-0.5)*0.004)}')\n"
        "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
        "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  }
  // vouch with each node's own stream and lock; ENV and ARGS as given.
  Res Vouch(const std::string& env, const std::string& args) const {
    return testing_util::Shell(
        fmt::format("cd {} && {} VOUCH_SIM={}/sim-%n.jsonl VOUCH_LOCK_FILE={}/lock-%n {} {}", D(),
                    env, D(), D(), VOUCH_BINARY, args));
  }
  static constexpr const char* kAb =
      "fleet ab --gres gpu:1 --poll-s 0.2 --min-busy-readings 3 --band 1 --a-env SPEED=100 "
      "--b-env SPEED=105 ";
};

TEST_F(FleetCli, AbPoolsNodesAndNamesTheOneThatDisagrees) {
  // B is 5 % faster everywhere but on n3, where it gains nothing.
  auto r = Vouch("ODDNODE=n3 ODDSPEED=100",
                 std::string(kAb) +
                     "--partition ab --nodes 4 --pairs 16 --seed 1 --dir run --json --cwd " + D() +
                     " -- ./leg.sh");
  // One node of four gains nothing: pooled over nodes as a random effect, the fleet cannot
  // say B is faster (inconclusive, exit 2), and the node is named.
  ASSERT_EQ(r.rc, 2) << r.out;
  auto j = Json("run/fleet-record.json");
  EXPECT_EQ(j["schema"], "vouch.fleet");
  EXPECT_EQ(j["verdict"], "inconclusive") << r.out;
  EXPECT_NEAR(j["pooled_without_disagreeing"]["ratio"]["mean"].get<double>(), 1.05, 0.005);
  EXPECT_EQ(j["pairs_used"], 16);
  EXPECT_TRUE(j["complete"].get<bool>());
  ASSERT_EQ(j["nodes"].size(), 4u) << j.dump(1);
  EXPECT_EQ(j["disagreeing_nodes"], nlohmann::json::array({"n3"})) << j.dump(1);
  for (const auto& n : j["nodes"]) {
    EXPECT_EQ(n["pairs_used"], 4) << n.dump();
    if (n["node"] == "n3") {
      EXPECT_NEAR(n["ratio"]["mean"].get<double>(), 1.0, 0.005);
      EXPECT_NE(n["verdict"], "B faster");
    } else {
      EXPECT_NEAR(n["ratio"]["mean"].get<double>(), 1.05, 0.005);
      EXPECT_EQ(n["verdict"], "B faster");
    }
  }
  // Heterogeneity is measured, not hidden: Q is large and I^2 near 100 %.
  EXPECT_GT(j["pooled"]["i2_pct"].get<double>(), 90);
  EXPECT_LT(j["pooled"]["q_p"].get<double>(), 1e-6);
  double ratio = j["pooled"]["ratio"]["mean"].get<double>();
  EXPECT_GT(ratio, 1.02);
  EXPECT_LT(ratio, 1.05);
  // Each node's evidence is in its own subtree, from its own stream and lock, on the GPU
  // Slurm gave the job step (--gres gpu:1).
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    bool found = false;
    for (const auto& e : fs::directory_iterator(D(fmt::format("run/nodes/{}", n)))) {
      auto info = Json(fs::relative(e.path() / "node.json", dir_).string());
      EXPECT_EQ(info["node"], n);
      EXPECT_EQ(info["status"], "complete");
      EXPECT_EQ(info["gpus"]["cuda_visible_devices"], "0") << info.dump();
      EXPECT_TRUE(Has(info["lock_file"].get<std::string>(), fmt::format("lock-{}", n)));
      auto rec = Json(fs::relative(e.path() / "run" / "record.json", dir_).string());
      EXPECT_EQ(rec["environment"]["gpu_selection"]["source"], "CUDA_VISIBLE_DEVICES=0");
      found = true;
    }
    EXPECT_TRUE(found) << n;
  }
  // n3's stream is 2 % lower in clock: its pairs were formed on n3 alone (A and B both on the
  // slow clock), so they pass the pairing rules; a pair across nodes would have failed them.
  auto show = Vouch("", "fleet merge run");
  EXPECT_EQ(show.rc, 2) << show.out;
  EXPECT_TRUE(Has(show.out, "fleet A/B verdict: inconclusive (4 nodes, 16 pairs used)"))
      << show.out;
  EXPECT_TRUE(Has(show.out, "without n3: ratio B/A 1.0")) << show.out;
  EXPECT_TRUE(Has(show.out, "DISAGREES n3")) << show.out;
}

TEST_F(FleetCli, LostNodeIsNamedMissingAndResumeRunsOnlyItsBlocks) {
  // n6's vouch is killed at its 6th leg (after the 2 warm-ups and one whole block).
  auto r =
      Vouch("FAILNODE=n6 FAILAT=6",
            std::string(kAb) + "--partition fault --nodes 3 --pairs 12 --seed 2 --dir run --cwd " +
                D() + " -- ./leg.sh");
  EXPECT_EQ(r.rc, 1) << r.out;  // a verdict from what finished, but not complete: exit 1
  auto j = Json("run/fleet-record.json");
  EXPECT_FALSE(j["complete"].get<bool>()) << j.dump(1);
  ASSERT_EQ(j["missing"].size(), 1u) << j.dump(1);
  const auto& miss = j["missing"][0];
  EXPECT_EQ(miss["planned_blocks"], 2);
  EXPECT_EQ(miss["done_blocks"], 1);
  std::string why = miss["why"];
  EXPECT_TRUE(Has(why, "FAILED on n6")) << why;
  EXPECT_TRUE(Has(why, "vouch never finished on the node")) << why;
  EXPECT_EQ(j["pairs_used"], 10);  // the lost node's finished block is kept
  EXPECT_TRUE(Has(r.out, "MISSING r0-t")) << r.out;

  auto again = Vouch("", std::string(kAb) + "--resume run --cwd " + D() + " -- ./leg.sh");
  auto k = Json("run/fleet-record.json");
  EXPECT_TRUE(k["complete"].get<bool>()) << again.out;
  EXPECT_EQ(k["pairs_used"], 12) << again.out;
  EXPECT_EQ(k["verdict"], "B faster");
  auto plan = Json("run/fleet.json");
  ASSERT_EQ(plan["rounds"].size(), 2u);
  ASSERT_EQ(plan["rounds"][1]["tasks"].size(), 1u);
  EXPECT_EQ(plan["rounds"][1]["tasks"][0]["blocks"], 1);  // only the missing block
  EXPECT_EQ(plan["rounds"][1]["tasks"][0]["covers"], miss["task"]);
  EXPECT_TRUE(Has(again.out, "resume: task r1-t0 runs 1 missing block(s)")) << again.out;
  // Nothing more to do.
  auto done = Vouch("", std::string(kAb) + "--resume run -- ./leg.sh");
  EXPECT_TRUE(Has(done.out, "nothing is missing")) << done.out;
  EXPECT_EQ(done.rc, 0);
}

TEST_F(FleetCli, InterruptCancelsOnlyItsOwnJobs) {
  // Someone else's job on the cluster.
  auto other = testing_util::Shell("sbatch --parsable -p intr -o /dev/null --wrap 'sleep 60' 2>&1");
  ASSERT_EQ(other.rc, 0) << other.out;
  std::string other_id = testing_util::Shell("echo " + other.out + " | tr -d '\\n'").out;
  Script("go.sh",
         fmt::format(
             // In the background SIGINT is ignored (and stays so); env gives it back.
             "VOUCH_SIM={0}/sim-%n.jsonl VOUCH_LOCK_FILE={0}/lock-%n env --default-signal=INT "
             "{1} {2} --partition intr --nodes 2 --pairs 40 --seed 3 --dir run --cwd {0} -- "
             "./leg.sh > "
             "out.txt 2>&1 &\necho $! > pid\n",
             D(), VOUCH_BINARY, kAb));
  ASSERT_EQ(testing_util::Shell("cd " + D() + " && ./go.sh").rc, 0);
  // Wait until its legs run, then Ctrl-C.
  auto wait = testing_util::Shell(
      "cd " + D() +
      " && for i in $(seq 1 100); do ls run/nodes/*/*/legs >/dev/null 2>&1 && break; "
      "sleep 0.1; done; kill -INT $(cat pid); for i in $(seq 1 200); do kill -0 $(cat pid) "
      "2>/dev/null || break; sleep 0.1; done; kill -0 $(cat pid) 2>/dev/null && echo STILL; cat "
      "out.txt");
  EXPECT_FALSE(Has(wait.out, "STILL")) << wait.out;
  EXPECT_TRUE(Has(wait.out, "cancelled job(s)")) << wait.out;
  auto plan = Json("run/fleet.json");
  std::string ours = plan["rounds"][0]["job_id"];
  auto st = testing_util::Shell("scontrol show job -o " + ours +
                                " | grep -o 'JobState=[A-Z]*' | sort -u");
  EXPECT_TRUE(Has(st.out, "JobState=CANCELLED")) << st.out;
  EXPECT_FALSE(Has(st.out, "RUNNING")) << st.out;
  auto theirs =
      testing_util::Shell("scontrol show job -o " + other_id + " | grep -o 'JobState=[A-Z]*'");
  EXPECT_TRUE(Has(theirs.out, "JobState=RUNNING") || Has(theirs.out, "JobState=PENDING"))
      << theirs.out;
  (void)testing_util::Shell("scancel " + other_id);
  // The merged record keeps what finished and says it was interrupted.
  auto j = Json("run/fleet-record.json");
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_FALSE(j["complete"].get<bool>());
}

TEST_F(FleetCli, BaselineAndGateNameTheSlowNodeAndItsGpu) {
  auto b = Vouch("",
                 "fleet baseline --partition gate --nodes 3 --poll-s 0.2 --min-busy-readings 3 "
                 "--trials 3 --env "
                 "SPEED=100 --dir base --cwd " +
                     D() + " -- ./leg.sh");
  ASSERT_EQ(b.rc, 0) << b.out;
  auto bj = Json("base/fleet-record.json");
  ASSERT_EQ(bj["nodes"].size(), 3u) << bj.dump(1);
  for (const auto& n : bj["nodes"]) EXPECT_TRUE(n.contains("baseline")) << n.dump();
  // The gate: each node against its own baseline; the node now 5 % slower fails, by name.
  std::string slow = bj["nodes"][1]["node"];
  auto g = Vouch("SLOWNODE=" + slow,
                 "fleet gate --partition gate --nodes 3 --poll-s 0.2 --min-busy-readings 3 --reps "
                 "3 --env SPEED=100 "
                 "--baseline base --dir gate --cwd " +
                     D() + " -- ./leg.sh");
  EXPECT_EQ(g.rc, 1) << g.out;
  auto gj = Json("gate/fleet-record.json");
  EXPECT_EQ(gj["verdict"], "fail");
  EXPECT_EQ(gj["failing_nodes"], nlohmann::json::array({slow})) << gj.dump(1);
  EXPECT_TRUE(Has(g.out, fmt::format("FAIL on {} (GPU GPU-SIMULATED-0): tok_s", slow))) << g.out;
  // A node the fleet baseline has no baseline for: its task fails, and the merged record says
  // why from the task's own log.
  auto none = Vouch("",
                    "fleet gate --exclude n[1-10] --nodes 1 --poll-s 0.2 --reps 2 --env "
                    "SPEED=100 --baseline base --dir gate2 --cwd " +
                        D() + " -- ./leg.sh");
  EXPECT_EQ(none.rc, 1) << none.out;
  auto nj = Json("gate2/fleet-record.json");
  ASSERT_EQ(nj["missing"].size(), 1u) << nj.dump(1);
  EXPECT_TRUE(Has(nj["missing"][0]["why"], "its log: vouch fleet worker: the fleet baseline"))
      << nj.dump(1);
  EXPECT_TRUE(Has(nj["missing"][0]["why"], "has no baseline for node n1")) << nj.dump(1);
  ASSERT_EQ(gj["metrics"].size(), 1u);
  EXPECT_EQ(gj["metrics"][0]["disagreeing_nodes"], nlohmann::json::array({slow})) << gj.dump(1);
}

}  // namespace
}  // namespace vouch
