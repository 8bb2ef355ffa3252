// Reading a fleet's evidence: what an A/B attempt keeps of its record, and the record's checks
// that the pairs' formation relies on (a damaged window is refused, naming the file).
#include "fleet/evidence.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace vouch {
namespace {

namespace fs = std::filesystem;

// A real A/B record, with the writer a newer vouch stamps.
nlohmann::json AbRecord() {
  std::ifstream in(VOUCH_SOURCE_DIR "/tests/data/store/ab/record.json");
  auto rec = nlohmann::json::parse(in);
  rec["writer"] = {{"pid", 4242}, {"host", "vm"}, {"boot_id", "boot-1"}, {"start_ticks", 77}};
  return rec;
}

TEST(FleetEvidence, SlimAbRecordKeepsTheListedFieldsAsTheyWere) {
  const nlohmann::json full = AbRecord();
  nlohmann::json slim = full;
  SlimAbRecord(slim);
  std::set<std::string> want = {"legs"}, got;
  for (const char* k : kAbRecordKept) {
    ASSERT_TRUE(full.contains(k)) << k;  // the real record has each: the list is not stale
    want.insert(k);
    EXPECT_EQ(slim[k], full[k]) << k;
  }
  for (const auto& [k, v] : slim.items()) got.insert(k);
  EXPECT_EQ(got, want);
  ASSERT_EQ(slim["legs"].size(), full["legs"].size());
  for (size_t i = 0; i < full["legs"].size(); ++i) {
    const auto& w = full["legs"][i]["window"];
    const auto& s = slim["legs"][i]["window"];
    for (const char* k : kAbLegWindowKept) EXPECT_EQ(s[k], w[k]) << i << " " << k;
    EXPECT_EQ(s["host"]["boot_id"], w["host"]["boot_id"]) << i;
    ASSERT_EQ(s["gpus"].size(), w["gpus"].size()) << i;
    for (size_t g = 0; g < w["gpus"].size(); ++g)
      EXPECT_EQ(s["gpus"][g]["static"]["uuid"], w["gpus"][g]["static"]["uuid"]) << i;
    EXPECT_EQ(s.size(), kAbLegWindowKept.size() + 2) << i;  // and host, gpus: nothing else
  }
}

class FleetEvidenceDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / fmt::format("vouch_fleet_evidence_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "nodes");
    std::ofstream(dir_ / "fleet.json")
        << R"({"schema":"vouch.fleet.plan","version":1,"kind":"ab","node_args":[],)"
        << R"("command":["./leg.sh"],"nodes":1,"pairs":4,"seed":1,"baseline":"",)"
        << R"("vouch_binary":"vouch","global_args":[],"slurm":{},"rounds":[{"job_id":"",)"
        << R"("submitted_unix_s":0,"tasks":[{"id":"r0-t0","blocks":2,"seed":0,"covers":""}]}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  // n1's attempt of r0-t0 holding REC; the record's path.
  std::string Attempt(const nlohmann::json& rec) const {
    const fs::path a = dir_ / "nodes" / "n1" / "r0-t0-a0";
    fs::create_directories(a / "run");
    std::ofstream(a / "node.json") << R"({"node":"n1","task":"r0-t0","attempt":0})";
    std::ofstream(a / "run" / "record.json") << rec.dump(2);
    return (a / "run" / "record.json").string();
  }
  // The first measured leg marked valid: the pairs read its window.
  static nlohmann::json& ValidMeasured(nlohmann::json& rec) {
    for (auto& l : rec["legs"])
      if (l["role"] == "measured" && l["valid"] == true) return l;
    throw std::runtime_error("no valid measured leg");
  }
  fs::path dir_;
};

TEST_F(FleetEvidenceDir, AnIntactRecordGivesItsPairsAndIsSlimmed) {
  Attempt(AbRecord());
  auto ev = ReadFleetEvidence(dir_.string(), {});
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  ASSERT_EQ(ev->attempts.size(), 1u);
  const FleetAttempt& a = ev->attempts[0];
  EXPECT_EQ(a.problem, "");
  EXPECT_EQ(a.pairs.size(), 4u);
  ASSERT_TRUE(a.record);
  EXPECT_FALSE(a.record->contains("summary"));
  EXPECT_EQ((*a.record)["status"], "complete");
}

TEST_F(FleetEvidenceDir, DamagedWindowsAreRefusedNamingTheFile) {
  // A fold out of its range: the record's own check (the window schema, walked once).
  auto rec = AbRecord();
  ValidMeasured(rec)["window"]["gpus"][0]["fold"]["busy_fraction"] = 7;
  std::string path = Attempt(rec);
  auto ev = ReadFleetEvidence(dir_.string(), {});
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  ASSERT_EQ(ev->attempts.size(), 1u);
  EXPECT_NE(ev->attempts[0].problem.find(path), std::string::npos) << ev->attempts[0].problem;
  EXPECT_NE(ev->attempts[0].problem.find("busy_fraction"), std::string::npos);
  EXPECT_TRUE(ev->attempts[0].pairs.empty());
  // A window that is not a window (its header, which the schema does not fix): the pair that
  // reads it is refused with the reason.
  rec = AbRecord();
  ValidMeasured(rec)["window"]["schema"] = "vouch.record";
  Attempt(rec);
  ev = ReadFleetEvidence(dir_.string(), {});
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  std::string reasons;
  for (const auto& p : ev->attempts[0].pairs)
    if (!p["valid"].get<bool>()) reasons += p["reason"].get<std::string>();
  EXPECT_NE(reasons.find("not a vouch window summary"), std::string::npos) << reasons;
}

}  // namespace
}  // namespace vouch
