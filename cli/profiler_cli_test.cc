// A traced leg whose program runs its own profiler (issue 35 item 2), through the real binary on
// the simulated device: the leg script writes what the tracer writes when another CUPTI client
// took the records (a launch count above the kernel records, count lines inside the region and
// no kernel there). The leg is refused with the reason and no gpu.* figure; `vouch show` reads
// the same answer from the record. The tracer "library" is any ELF file (vouch itself).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
using testing_util::Has;

class ProfilerCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // RECORDS: the footer's kernel records; INSIDE=1 puts the one kernel inside the region.
    Script(
        "pleg.sh",
        "now=$(date +%s%N); sleep 0.7\n"
        "out=$(echo \"$VOUCH_GPU_TRACE\" | sed \"s/%p/$$/\")\n"
        "k=$((now + 500000)); [ -n \"$INSIDE\" ] && k=$((now + 50000000))\n"
        "{ echo '{\"type\":\"header\",\"format\":\"vouch-gpu-trace\",\"version\":1,\"pid\":'$$"
        "',\"timestamp_offset_ns\":0,\"launch_count\":\"on\",\"ok\":true}'\n"
        "  echo '{\"t\":\"n\",\"id\":0,\"v\":\"copy_kernel\"}'\n"
        "  echo '{\"t\":\"k\",\"s\":'$k',\"e\":'$((k + 3000))',\"dev\":0,\"str\":7,\"corr\":1,"
        "\"n\":0}'\n"
        "  for i in 1 2 3 4; do echo '{\"t\":\"lc\",\"ts\":'$((now + i * 100000000))',\"k\":'$((i "
        "* 2210))'}'; done\n"
        "  echo '{\"type\":\"footer\",\"dropped\":0,\"kernel_launches\":'${LAUNCHES}',"
        "\"kernel_records\":'${RECORDS}'}'; } > \"$out\"\n"
        "sec() { echo $1 | sed 's/\\(.........\\)$/.\\1/'; }\n"
        "echo \"{\\\"event\\\":\\\"begin\\\",\\\"unix_s\\\":$(sec $((now + 1000000)))}\" >> "
        "\"$VOUCH_METRICS\"\n"
        "echo \"{\\\"event\\\":\\\"end\\\",\\\"unix_s\\\":$(sec $((now + 500000000)))}\" >> "
        "\"$VOUCH_METRICS\"\n");
  }
  testing_util::ShellResult Vouch(const std::string& args) const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}",
                                           D(), D(), kBusy, VOUCH_BINARY, args));
  }
  static int GpuFigures(const nlohmann::json& leg) {
    int n = 0;
    for (const auto& m : leg["metrics"])
      if (m["name"].get<std::string>().rfind("gpu.", 0) == 0) ++n;
    return n;
  }
};

TEST_F(ProfilerCli, RecordsTakenByAnotherClientRefuseTheLegNeverAZero) {
  auto r = Vouch("run --min-busy-readings 3 --min-busy-pct 10 --gpu-trace-lib " VOUCH_BINARY
                 " --warmup 0 --reps 1 --out r --env LAUNCHES=22100 --env RECORDS=1 -- ./pleg.sh");
  EXPECT_EQ(r.rc, 1) << r.out;
  const auto leg = Json("r/record.json")["legs"][0];
  EXPECT_FALSE(leg["valid"].get<bool>()) << leg.dump(2);
  EXPECT_EQ(GpuFigures(leg), 0) << leg["metrics"].dump(2);
  std::string reasons = leg["reasons"].dump();
  EXPECT_TRUE(Has(reasons,
                  "the tracer counted 22100 kernel launches and received 1 kernel "
                  "records"))
      << reasons;
  // Count lines at +100..+400 ms lie inside the region (+1..+500 ms): 8840 - 2210.
  EXPECT_TRUE(Has(reasons, "the measured region had at least 6630 kernel launches")) << reasons;
  EXPECT_TRUE(Has(reasons, "run the traced leg without the program's own profiler")) << reasons;
  EXPECT_EQ(leg["gpu_trace"]["tracer_checks"][0]["region_launches"], 6630);
  EXPECT_GE(leg["gpu_trace"]["refused"].size(), 2u);  // and the busy GPU, where the sim is busy
  auto show = Vouch("show r");
  EXPECT_TRUE(Has(show.out, "the tracer counted 22100 kernel launches")) << show.out;
}

TEST_F(ProfilerCli, ATraceThatHoldsWhatWasLaunchedIsQuoted) {
  auto r = Vouch("run --min-busy-readings 3 --min-busy-pct 10 --gpu-trace-lib " VOUCH_BINARY
                 " --warmup 0 --reps 1 --out r --env LAUNCHES=1 --env RECORDS=1 --env INSIDE=1 -- "
                 "./pleg.sh");
  const auto leg = Json("r/record.json")["legs"][0];
  ASSERT_TRUE(leg["valid"].get<bool>()) << leg.dump(2);
  EXPECT_EQ(r.rc, 0) << r.out;
  int kernels = -1;
  for (const auto& m : leg["metrics"])
    if (m["name"] == "gpu.kernels") kernels = m["value"].get<int>();
  EXPECT_EQ(kernels, 1);
  EXPECT_TRUE(leg["gpu_trace"]["refused"].empty());
}

}  // namespace
}  // namespace vouch
