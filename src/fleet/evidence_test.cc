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

#include "fleet/attempt_fast.h"
#include "fleet/trust.h"
#include "util/fs.h"

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

// The seal's MAC is RFC 2104's HMAC-SHA256 (OpenSSL's EVP_MAC), as the submitter's script
// computes it (Python's hmac module gave these), for a key of one block and a longer one, and
// again after another key was used (the keyed context is kept per key).
TEST(FleetEvidence, SealMacIsHmacSha256OfTheIdentity) {
  const AttemptIdentity id{"node7", "r0-t3", 2};
  std::string sha;
  for (int i = 0; i < 32; ++i) sha += "ab";
  const std::string a = "4d4cf0bb8beb74f4dc6b807224e47f95cc2a50e7dd11f97589ca581f0bb0f824";
  const std::string b = "de05ba1da69c0575d93f7a1c01c59802568a050b8a4bad55d30ad6446c895383";
  EXPECT_EQ(FleetSealMac(std::string(64, 'k'), id, "run/record.json", sha), a);
  EXPECT_EQ(FleetSealMac(std::string(100, 'x'), id, "run/record.json", sha), b);
  EXPECT_EQ(FleetSealMac(std::string(64, 'k'), id, "run/record.json", sha), a);
  EXPECT_NE(FleetSealMac(std::string(64, 'k'), id, "node.json", sha), a);
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

// Every field of what an attempt is read as, for comparing the two readings.
std::string Describe(const FleetEvidence& ev) {
  std::string out = fmt::format("refusals {}\nproblems {}\n", fmt::join(ev.refusals, " | "),
                                fmt::join(ev.problems, " | "));
  for (const auto& a : ev.attempts)
    out += fmt::format(
        "{} {} {} {}\n node {}\n record {}\n problem {}\n pairs {}\n edits {}\n {} {} {}\n", a.node,
        a.task_id, a.attempt, a.dir, a.node_info.dump(), a.record ? a.record->dump() : "none",
        a.problem, a.pairs.dump(), fmt::join(a.edits, " | "), a.headline, a.better,
        a.band_log ? fmt::format("{}", *a.band_log) : "none");
  return out;
}

// The reading without a tree of the record (fleet/attempt_fast.h) leaves each attempt as the
// ordinary one does: sealed evidence intact, and edited in the ways it must leave to the
// ordinary reading (which words them).
TEST_F(FleetEvidenceDir, TheFastReadingIsTheOrdinaryOne) {
  ASSERT_TRUE(CreateFleetKey(dir_.string()).ok());
  auto key = ReadFleetKey(dir_.string());
  ASSERT_TRUE(key.ok()) << key.error().message;
  const fs::path a = dir_ / "nodes" / "n1" / "r0-t0-a0";
  auto check = [&](const std::string& what, const std::string& text, bool seal = true) {
    fs::remove_all(dir_ / "nodes" / "n1");
    fs::create_directories(a / "run");
    std::ofstream(a / "node.json") << R"({"node":"n1","task":"r0-t0","attempt":0})";
    std::ofstream(a / "run" / "record.json") << text;
    if (seal) {
      EXPECT_TRUE(SealFleetAttempt(*key, a.string(), {"n1", "r0-t0", 0}).ok()) << what;
    }
    auto fast = ReadFleetEvidence(dir_.string(), {}, true);
    auto slow = ReadFleetEvidence(dir_.string(), {}, false);
    if (!fast.ok() || !slow.ok()) {
      ADD_FAILURE() << what;
      return std::string();
    }
    EXPECT_EQ(Describe(*fast), Describe(*slow)) << what;
    return Describe(*fast);
  };
  const std::string intact = check("intact", AbRecord().dump(2));
  EXPECT_NE(intact.find("\"valid\":true"), std::string::npos) << intact;
  EXPECT_NE(intact.find("problem \n"), std::string::npos) << intact;
  {  // and it was the fast reading's own: it declined nothing there
    FleetAttempt fa;
    fa.node = "n1";
    fa.task_id = "r0-t0";
    fa.dir = a.string();
    auto top = ListDir(a.string(), false);
    auto run = ListDir((a / "run").string(), false);
    ASSERT_TRUE(top.ok() && run.ok());
    EXPECT_TRUE(ReadAbAttemptFast(fa, *top, *run, *key));
    EXPECT_EQ(fa.pairs.size(), 4u);
  }
  auto edit = [&](const std::string& what, auto&& change) {
    nlohmann::json rec = AbRecord();
    change(rec);
    check(what, rec.dump(2));
  };
  edit("a listed pair", [](nlohmann::json& r) { r["extra"]["verdict"]["pairs"][1]["b"] = 9; });
  edit("a listed leg", [](nlohmann::json& r) { r["extra"]["verdict"]["pairs"][0]["a_leg"] = 5; });
  edit("the direction", [](nlohmann::json& r) { r["extra"]["verdict"]["better"] = "lower"; });
  edit("a headline no leg has", [](nlohmann::json& r) { r["extra"]["verdict"]["headline"] = "x"; });
  edit("a headline not a string", [](nlohmann::json& r) { r["extra"]["verdict"]["headline"] = 3; });
  edit("no arms", [](nlohmann::json& r) { r["extra"]["verdict"].erase("arms"); });
  edit("no policy", [](nlohmann::json& r) { r.erase("policy"); });
  edit("a tight policy", [](nlohmann::json& r) { r["policy"]["max_mean_offset"] = 1e-9; });
  edit("running, no verdict", [](nlohmann::json& r) {
    r["status"] = "running";
    r["extra"]["blocks_so_far"] = {{"pairs", r["extra"]["verdict"]["pairs"]}, {"band_log", 0.01}};
    r["extra"].erase("verdict");
  });
  edit("no extra", [](nlohmann::json& r) { r.erase("extra"); });
  edit("a fold out of range", [](nlohmann::json& r) {
    ValidMeasured(r)["window"]["gpus"][0]["fold"]["busy_fraction"] = 7;
  });
  edit("a window that is not one",
       [](nlohmann::json& r) { ValidMeasured(r)["window"]["schema"] = "vouch.record"; });
  edit("another boot",
       [](nlohmann::json& r) { ValidMeasured(r)["window"]["host"]["boot_id"] = "b2"; });
  edit("a leg marked invalid", [](nlohmann::json& r) {
    nlohmann::json& leg = ValidMeasured(r);
    leg["valid"] = false;
    leg["reasons"] = {"throttled"};
  });
  edit("a summary edited", [](nlohmann::json& r) { r["summary"]["A"][0]["median"] = 1; });
  edit("a repeated leg index", [](nlohmann::json& r) { r["legs"][3]["index"] = 2; });
  edit("another schema version", [](nlohmann::json& r) { r["schema_version"] = 99; });
  // Text the two parsers could read differently, and a key given twice.
  std::string text = AbRecord().dump(2);
  check("a key twice", "{\"status\": \"running\"," + text.substr(1));
  check("-0", "{\"zero\": -0," + text.substr(1));
  check("not sealed", text, false);
  // Edited after its seal.
  check("sealed", text);
  std::ofstream(a / "run" / "record.json") << AbRecord().dump(1);
  auto fast = ReadFleetEvidence(dir_.string(), {}, true);
  auto slow = ReadFleetEvidence(dir_.string(), {}, false);
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_EQ(Describe(*fast), Describe(*slow));
  EXPECT_NE(Describe(*fast).find("not what vouch wrote"), std::string::npos);
}

}  // namespace
}  // namespace vouch
