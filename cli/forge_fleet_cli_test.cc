// `vouch fleet merge` against forged fleet evidence (issue 21, class 6), through the real
// binary. No Slurm is needed: each test builds a fleet directory (fleet.json and
// nodes/<node>/<task>-a0/{node.json,run/record.json}) from a real A/B record
// (tests/data/store/ab: B/A = 1.029 on its legs) and merges it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using testing_util::Has;
using Res = testing_util::ShellResult;
const std::string kAbRecord = VOUCH_SOURCE_DIR "/tests/data/store/ab/record.json";

class ForgeFleetCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ifstream in(kAbRecord);
    record_ = nlohmann::json::parse(in);
    record_["writer"] = {{"pid", 4242}, {"host", "vm"}, {"boot_id", "boot-1"}, {"start_ticks", 77}};
  }
  // fleet.json of KIND with TASKS tasks of BLOCKS blocks each, never submitted (no Slurm job).
  void Plan(const std::string& kind, int tasks, int blocks) const {
    fs::create_directories(D("run/nodes"));
    std::ofstream out(D("run/fleet.json"));
    out << R"({"schema":"vouch.fleet.plan","version":1,"kind":")" << kind
        << R"(","node_args":[],"command":["./leg.sh"],"nodes":)" << tasks << R"(,"pairs":)"
        << 2 * blocks * tasks
        << R"(,"seed":1,"baseline":"","vouch_binary":"vouch","global_args":[],"slurm":{},)"
        << R"("rounds":[{"job_id":"","submitted_unix_s":0,"tasks":[)";
    for (int i = 0; i < tasks; ++i)
      out << (i ? "," : "") << R"({"id":"r0-t)" << i << R"(","blocks":)" << blocks
          << R"(,"seed":0,"covers":""})";
    out << "]}]}\n";
  }
  // The attempt folder of TASK on NODE, with node.json saying CLAIMED_NODE and REC.
  std::string Attempt(const std::string& node, const std::string& task, const nlohmann::json& rec,
                      const std::string& claimed_node = "") const {
    std::string rel = fmt::format("run/nodes/{}/{}-a0", node, task);
    fs::create_directories(D(rel + "/run"));
    nlohmann::json info = {{"schema", "vouch.fleet.node"},
                           {"node", claimed_node.empty() ? node : claimed_node},
                           {"task", task},
                           {"attempt", 0},
                           {"status", "complete"},
                           {"exit_code", 0}};
    std::ofstream(D(rel + "/node.json")) << info.dump(2);
    if (!rec.is_null()) std::ofstream(D(rel + "/run/record.json")) << rec.dump(2);
    return rel;
  }
  // The record measured again, later: every time stamp moved by SECONDS, another writer.
  nlohmann::json Later(double seconds) const {
    nlohmann::json r = record_;
    r["started_unix_s"] = r["started_unix_s"].get<double>() + seconds;
    r["writer"]["pid"] = 4243;
    for (auto& l : r["legs"])
      for (const char* k : {"started_unix_s", "ended_unix_s"})
        l["window"][k] = l["window"][k].get<double>() + seconds;
    return r;
  }
  Res Merge(const std::string& args = "") const {
    return testing_util::Shell(
        fmt::format("cd {} && {} fleet merge {} {}", D(), VOUCH_BINARY, D("run"), args));
  }
  nlohmann::json record_;
};

TEST_F(ForgeFleetCli, OneNodesEvidenceCopiedUnderAnotherIsRefusedNamingBoth) {
  // The control: two nodes with evidence of their own are pooled, B faster by 2.9 %.
  Plan("ab", 2, 2);
  std::string n1 = Attempt("n1", "r0-t0", record_);
  Attempt("n2", "r0-t1", Later(1000));
  auto ok = Merge("--json");
  ASSERT_EQ(ok.rc, 0) << ok.out;
  auto k = Json("run/fleet-record.json");
  EXPECT_EQ(k["verdict"], "B faster") << k.dump(1);
  EXPECT_EQ(k["nodes"].size(), 2u);
  EXPECT_NEAR(k["pooled"]["ratio"]["mean"].get<double>(), 1.029, 0.001);
  // n1's record copied under n2 as it is: one writer (pid, boot, start) on one GPU.
  std::string n2 = Attempt("n2", "r0-t1", record_);
  auto r = Merge();
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "fleet A/B verdict: refused")) << r.out;
  EXPECT_TRUE(Has(r.out, fmt::format("{} and {} hold the same evidence", D(n1), D(n2)))) << r.out;
  EXPECT_TRUE(Has(r.out, "pid 4242, boot boot-1, start 77, GPU GPU-SIMULATED-0")) << r.out;
  // The copy with its writer edited still holds n1's legs.
  auto copy = record_;
  copy["writer"]["pid"] = 9999;
  copy["started_unix_s"] = 1;
  Attempt("n2", "r0-t1", copy);
  r = Merge("--json");
  EXPECT_EQ(r.rc, 3) << r.out;
  auto j = Json("run/fleet-record.json");
  EXPECT_EQ(j["verdict"], "refused");
  ASSERT_EQ(j["refusals"].size(), 1u) << j.dump(1);
  std::string why = j["refusals"][0];
  EXPECT_TRUE(Has(why, D(n1)) && Has(why, D(n2))) << why;
  EXPECT_TRUE(Has(why, "a leg measured once, on GPU GPU-SIMULATED-0")) << why;
}

TEST_F(ForgeFleetCli, SymlinkedNodeFolderOrRecordIsRefused) {
  Plan("ab", 2, 2);
  Attempt("n1", "r0-t0", record_);
  fs::create_directory_symlink(D("run/nodes/n1"), D("run/nodes/n2"));
  auto r = Merge();
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(
      r.out, fmt::format("{} is a symbolic link (to {})", D("run/nodes/n2"), D("run/nodes/n1"))))
      << r.out;
  // A folder of its own whose record is a link to n1's.
  fs::remove(D("run/nodes/n2"));
  std::string n2 = Attempt("n2", "r0-t1", nullptr);
  fs::create_symlink(D("run/nodes/n1/r0-t0-a0/run/record.json"), D(n2 + "/run/record.json"));
  r = Merge();
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, fmt::format("{} is a symbolic link", D(n2 + "/run/record.json"))))
      << r.out;
}

TEST_F(ForgeFleetCli, NodeJsonNamingAnotherNodeIsRefused) {
  Plan("ab", 2, 2);
  Attempt("n1", "r0-t0", record_);
  std::string n2 = Attempt("n2", "r0-t1", Later(1000), "n1");
  auto r = Merge();
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(
      r.out, fmt::format("{}: node.json says it is node n1, but it lies under nodes/n2", D(n2))))
      << r.out;
  // The same for fleet run: nothing is pooled, exit 1.
  Plan("run", 2, 0);
  r = Merge("--json");
  EXPECT_EQ(r.rc, 1) << r.out;
  auto j = Json("run/fleet-record.json");
  ASSERT_EQ(j["refusals"].size(), 1u) << j.dump(1);
  EXPECT_TRUE(j["nodes"].empty()) << j.dump(1);
}

TEST_F(ForgeFleetCli, EditedPairsAreFormedAgainFromTheLegs) {
  // n1's listed pairs say B = 2 A (and swap a pair's legs); its legs measured B/A = 1.029.
  Plan("ab", 2, 2);
  auto edited = record_;
  for (auto& p : edited["extra"]["verdict"]["pairs"]) {
    p["b"] = 2 * p["a"].get<double>();
    p["d"] = std::log(2.0);
  }
  std::swap(edited["extra"]["verdict"]["pairs"][0]["a_leg"],
            edited["extra"]["verdict"]["pairs"][0]["b_leg"]);
  Attempt("n1", "r0-t0", edited);
  Attempt("n2", "r0-t1", Later(1000));
  auto r = Merge("--json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = Json("run/fleet-record.json");
  EXPECT_EQ(j["verdict"], "B faster");
  EXPECT_NEAR(j["pooled"]["ratio"]["mean"].get<double>(), 1.029, 0.001) << j.dump(1);
  for (const auto& n : j["nodes"]) {
    EXPECT_EQ(n["pairs_used"], 4) << n.dump();
    EXPECT_NEAR(n["ratio"]["mean"].get<double>(), 1.029, 0.001) << n.dump();
  }
  std::string problems = j["problems"].dump();
  EXPECT_TRUE(Has(problems, "nodes/n1/r0-t0-a0/run/record.json: pair 1 is listed as legs 3 and 4"))
      << problems;
  EXPECT_TRUE(Has(problems, "the pairs are formed again from the legs")) << problems;
  // A record whose legs are not ABBA/BAAB blocks of the two arms gives no pairs.
  auto shuffled = record_;
  shuffled["legs"][3]["arm"] = "B";
  Attempt("n1", "r0-t0", shuffled);
  r = Merge("--json");
  j = Json("run/fleet-record.json");
  EXPECT_EQ(j["pairs_used"], 4) << r.out;
  EXPECT_TRUE(Has(j["missing"].dump(), "r0-t0")) << j.dump(1);
}

// Issue 23 over a fleet: a `no change` or `inconclusive` verdict says the smallest effect it
// could see (band plus the pooled interval's half width); an arm whose legs on one node form
// two modes refuses the fleet verdict unless the nodes ran with --allow-modes.
TEST_F(ForgeFleetCli, FleetVerdictSaysItsMdeAndRefusesModes) {
  Plan("ab", 2, 2);
  auto wide = record_;
  wide["extra"]["verdict"]["band_log"] = std::log(1.05);  // B/A = 1.029: inside a 5 % band
  auto later = Later(1000);
  later["extra"]["verdict"]["band_log"] = std::log(1.05);
  Attempt("n1", "r0-t0", wide);
  Attempt("n2", "r0-t1", later);
  auto r = Merge();
  EXPECT_TRUE(r.rc == 0 || r.rc == 2) << r.out;
  EXPECT_TRUE(Has(r.out, "this fleet A/B could not have seen an effect smaller than ")) << r.out;
  auto j = Json("run/fleet-record.json");
  ASSERT_TRUE(j["mde_pct"].is_number()) << j.dump(1);
  EXPECT_GT(j["mde_pct"].get<double>(), 5.0);
  EXPECT_TRUE(j["verdict"] == "no change" || j["verdict"] == "inconclusive") << j["verdict"];
  // n1's arm A: two legs at the recorded speed, two at 70 % of it (a slow mode).
  // (Its summary says so too: a summary that does not match its legs is refused as edited.)
  auto bimodal = wide;
  int seen = 0;
  std::vector<double> a;
  for (auto& l : bimodal["legs"])
    if (l["arm"] == "A" && l["role"] == "measured")
      for (auto& m : l["metrics"])
        if (m["name"] == "tok_s") {
          if (seen++ % 2 == 1) m["value"] = 0.7 * m["value"].get<double>();
          a.push_back(m["value"].get<double>());
        }
  ASSERT_EQ(a.size(), 4u);
  std::sort(a.begin(), a.end());
  for (auto& e : bimodal["summary"]["A"])
    if (e["name"] == "tok_s") {
      e["min"] = a[0];
      e["max"] = a[3];
      e["median"] = (a[1] + a[2]) / 2;
    }
  Attempt("n1", "r0-t0", bimodal);
  r = Merge("--json");
  EXPECT_EQ(r.rc, 3) << r.out;
  j = Json("run/fleet-record.json");
  EXPECT_EQ(j["verdict"], "refused") << j.dump(1);
  EXPECT_TRUE(Has(j["modes"].dump(), "node n1: tok_s: arm A's legs show two modes")) << j["modes"];
  EXPECT_TRUE(Has(j["reasons"].dump(), "--allow-modes")) << j["reasons"];
  EXPECT_FALSE(Has(j["modes"].dump(), "node n2")) << j["modes"];
}

// The merged record, JSON and text, is byte for byte the one in tests/data/fleet (written by
// the merge before its reading was made faster): pooled nodes, a node whose listed pairs were
// edited, a node with no record and a folder that is not an attempt.
TEST_F(ForgeFleetCli, MergedRecordIsByteForByteTheKnownOne) {
  Plan("ab", 5, 2);
  Attempt("n1", "r0-t0", record_);
  for (int i = 1; i <= 3; ++i) {
    auto r = Later(1000.0 * i);
    r["writer"]["pid"] = 5000 + i;
    if (i == 2) r["extra"]["verdict"]["pairs"][1]["b"] = 1.0;
    Attempt(fmt::format("n{}", i + 1), fmt::format("r0-t{}", i), r);
  }
  Attempt("n5", "r0-t4", nlohmann::json());
  fs::create_directories(D("run/nodes/n1/junk"));
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string golden = VOUCH_SOURCE_DIR "/tests/data/fleet/merge_ab";
  auto r = testing_util::Shell(fmt::format(
      "cd {} && {{ {} fleet merge run --json 2>/dev/null >merged.json; }}", D(), VOUCH_BINARY));
  EXPECT_EQ(r.rc, 1) << r.out;  // n5 is missing: the fleet is incomplete
  EXPECT_EQ(read(D("merged.json")), read(golden + ".json"));
  r = testing_util::Shell(
      fmt::format("cd {} && {{ {} fleet merge run 2>/dev/null >merged.txt; }}", D(), VOUCH_BINARY));
  EXPECT_EQ(read(D("merged.txt")), read(golden + ".txt"));
}

TEST_F(ForgeFleetCli, PlanOfTwoHundredThousandTasksMerges) {
  // The merge was quadratic in the plan's tasks; this one is linear (never submitted: every
  // task is missing, and the verdict is refused for want of pairs).
  const int tasks = 200000;
  Plan("ab", tasks, 1);
  Attempt("n1", "r0-t0", record_);
  auto r = Merge("--json > merged.json");
  EXPECT_EQ(r.rc, 1) << r.out;  // n1's own verdict, incomplete
  auto j = Json("run/fleet-record.json");
  EXPECT_EQ(j["missing"].size(), static_cast<size_t>(tasks - 1));
  EXPECT_EQ(j["jobs"].size(), static_cast<size_t>(tasks));
  EXPECT_EQ(j["pairs_used"], 4);
}

}  // namespace
}  // namespace vouch
