// A figure above the GPU's roof, through the real binary on the simulated device (an H200: its
// datasheet memory bandwidth is 4.8 TB/s): a copy loop's true bandwidth passes, the same loop
// reporting twice its bytes is refused, the leg invalid and the figure not quoted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

using testing_util::Has;

class RoofCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // The bandwidth of the H200 copy loop of tests/data/sim (4 GiB copied in ~1.94 ms, read and
    // written: 4.43 TB/s), times $FACTOR.
    Script("copy.sh",
           "sleep 3.5\n"
           "v=$(awk -v f=\"${FACTOR:-1}\" 'BEGIN{printf \"%.1f\", 4430*f}')\n"
           "echo \"{\\\"name\\\":\\\"copy_bw\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"GB/s\\\","
           "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  }
};

TEST_F(RoofCli, TrueBandwidthPassesTwiceItsBytesIsRefused) {
  auto ok = VouchOnSim("h200-busy", "run --warmup 0 --reps 1 --out ok -- ./copy.sh", 60);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  auto rec = Json("ok/record.json");
  EXPECT_TRUE(rec["legs"][0]["valid"].get<bool>()) << rec["legs"][0].dump();
  auto twice = VouchOnSim("h200-busy",
                          "run --warmup 0 --reps 1 --env FACTOR=2 --out twice -- ./copy.sh", 60);
  EXPECT_NE(twice.rc, 0) << twice.out;
  EXPECT_TRUE(Has(twice.out,
                  "'copy_bw' 8860 GB/s (8.86 TB/s) is above what this GPU can do: the "
                  "NVIDIA H200 SXM datasheet memory bandwidth is 4.80 TB/s; the figure "
                  "is 1.85x it"))
      << twice.out;
  rec = Json("twice/record.json");
  EXPECT_FALSE(rec["legs"][0]["valid"].get<bool>());
  const auto reasons = rec["legs"][0]["reasons"].dump();
  EXPECT_TRUE(Has(reasons, "refused: 'copy_bw' 8860 GB/s")) << reasons;
}

// Ceilings given to the simulated device as `vouch doctor --calibrate` keeps them: a measured
// copy bandwidth of 3.00 TB/s for its GPU in its boot is tighter than the datasheet; in another
// boot it is stale and not used.
TEST_F(RoofCli, MeasuredCeilingsOfThisBootAreTheRoof) {
  auto write = [&](const std::string& boot) {
    std::ofstream(D("ceilings-GPU-SIMULATED-0.json"))
        << R"({"schema":"vouch.ceilings","schema_version":1,"uuid":"GPU-SIMULATED-0","boot_id":")"
        << boot
        << R"(","ceilings":[{"kind":"bytes","quantity":"copy_bandwidth","per_second":3.0e12,"noise":0.01,"measured":true,"source":"vouch doctor --calibrate","date":"2026-12-06 11:00 UTC"}]})";
  };
  write("simulated-boot-0");
  auto r = testing_util::Shell("cd " + D() + " && VOUCH_CEILINGS_DIR=" + D() + " VOUCH_LOCK_FILE=" +
                               D("lock") + " VOUCH_SIM=h200-busy timeout 60 " + VOUCH_BINARY +
                               " run --warmup 0 --reps 1 --out m -- ./copy.sh");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "the device-to-device copy bandwidth measured by vouch doctor --calibrate "
                  "on 2026-12-06 11:00 UTC is 3.00 TB/s (noise 1.0 %); the figure is 1.48x "
                  "it; the NVIDIA H200 SXM datasheet memory bandwidth is 4.80 TB/s"))
      << r.out;
  write("another-boot");
  r = testing_util::Shell("cd " + D() + " && VOUCH_CEILINGS_DIR=" + D() +
                          " VOUCH_LOCK_FILE=" + D("lock") + " VOUCH_SIM=h200-busy timeout 60 " +
                          VOUCH_BINARY + " run --warmup 0 --reps 1 --out s -- ./copy.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto calib = VouchOnSim("h200-busy", "doctor --calibrate", 30);
  EXPECT_EQ(calib.rc, 1) << calib.out;
  EXPECT_TRUE(Has(calib.out, "the simulated device has none")) << calib.out;
}

}  // namespace
}  // namespace vouch
