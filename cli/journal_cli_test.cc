// A run killed outright (SIGKILL: no handler runs) keeps every finished leg: record.json
// says "running" and `vouch show` reassembles the legs from the journal legs.jsonl.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
using testing_util::Has;

class JournalCli : public testing_util::ScratchDirTest {};

TEST_F(JournalCli, AKilledRunIsShownFromItsJournal) {
  // Waits until two legs are in the journal, then kills vouch without warning.
  auto r = testing_util::Shell(fmt::format(
      "cd {0} && (VOUCH_LOCK_FILE={0}/lock VOUCH_SIM={1} {2} run --min-busy-readings 5 "
      "--warmup 0 --reps 50 --out r -- sleep 0.6 & p=$!; "
      "for i in $(seq 200); do [ \"$(cat r/legs.jsonl 2>/dev/null | wc -l)\" -ge 2 ] && break; "
      "sleep 0.1; done; kill -KILL $p; wait $p; echo rc=$?)",
      D(), kBusy, VOUCH_BINARY));
  ASSERT_TRUE(Has(r.out, "rc=137")) << r.out;
  EXPECT_EQ(Json("r/record.json")["status"], "running");  // never finalised
  auto show = testing_util::Shell(fmt::format("cd {} && {} show r", D(), VOUCH_BINARY));
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_TRUE(Has(show.out, "read from the journal legs.jsonl")) << show.out;
  // Its writer is gone (SIGKILL): killed, not "running" forever, and no cause is guessed.
  EXPECT_TRUE(Has(show.out, "run killed started")) << show.out;
  EXPECT_TRUE(Has(show.out, "is gone and left no cause")) << show.out;
  EXPECT_TRUE(Has(show.out, "  1 run    measured valid")) << show.out;  // legs count from 1
  EXPECT_TRUE(Has(show.out, "  2 run    measured valid")) << show.out;
  EXPECT_TRUE(Has(show.out, "vouch.wall_s")) << show.out;  // the summary, recomputed
}

TEST_F(JournalCli, AFinishedRunWritesEachLegOnceInTheJournalAndTheWholeRecordAtTheEnd) {
  // Each leg spans several of the sampler's 10 ms readings: a `true` leg of about 1 ms missed
  // its one reading now and then on a loaded machine (3 of 30 beside two busy loops).
  auto r = testing_util::Shell(
      fmt::format("cd {0} && VOUCH_LOCK_FILE={0}/lock VOUCH_SIM={1} {2} run --min-busy-readings 1 "
                  "--warmup 1 --reps 4 --out r -- sleep 0.05",
                  D(), kBusy, VOUCH_BINARY));
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["status"], "complete") << r.out;
  ASSERT_EQ(rec["legs"].size(), 5u);
  std::ifstream in(D("r/legs.jsonl"));
  int lines = 0;
  for (std::string l; std::getline(in, l); ++lines)
    EXPECT_EQ(nlohmann::json::parse(l), rec["legs"][static_cast<std::size_t>(lines)]);
  EXPECT_EQ(lines, 5);
}

}  // namespace
}  // namespace vouch
