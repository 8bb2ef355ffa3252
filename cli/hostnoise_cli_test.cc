// Host noise, the tracer's own cost and advice that fits the case (issue 23 items 5 and 6,
// issue 22 item 9), through the real binary on the simulated device. As in
// gpu_trace_cli_test.cc, the "tracer" is any ELF file and the leg writes the trace the real
// tracer would. The wall-clock headline's noise is a counter in the working directory (leg n
// reports SPEED x (1 + NOISE x ((n mod 3) - 1))): known, not random.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "record/record.h"
#include "report/report.h"
#include "store/store.h"
#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;

class HostNoiseCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::copy_file(kBusy, D("sim.jsonl"));
    // 10 decode_step ranges of 2 gemv kernels (KDUR ns), EXTRA adds extra_mm per step, FIRSTX
    // adds warm_kernel to the first step only; API=off writes the lean tracer's header.
    Script(
        "hleg.sh",
        "now=$(date +%s%N); sec=${now%?????????}; ns=${now#$sec}; sleep 0.6\n"
        "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\n"
        "F='function T(o, x) { x = ns + o; return sprintf(\"%d%09d\", sec + int(x / 1e9), x % 1e9) "
        "} function U(o, x) { x = ns + o; return sprintf(\"%d.%09d\", sec + int(x / 1e9), x % "
        "1e9) }'\n"
        "if [ -n \"$VOUCH_GPU_TRACE\" ]; then\n"
        "out=$(echo \"$VOUCH_GPU_TRACE\" | sed \"s/%p/$$/\")\n"
        "awk -v sec=$sec -v ns=$ns -v pid=$$ -v k=${KDUR:-20000} -v extra=\"$EXTRA\" "
        "-v firstx=\"$FIRSTX\" -v api=${API:-launch} \"$F\"' BEGIN {\n"
        " printf \"{\\\"type\\\":\\\"header\\\",\\\"format\\\":\\\"vouch-gpu-trace\\\","
        "\\\"version\\\":1,\\\"pid\\\":%d,\\\"timestamp_offset_ns\\\":0,\\\"api\\\":\\\"%s\\\","
        "\\\"ok\\\":true}\\n\", pid, api\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":0,\\\"v\\\":\\\"decode_step\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":1,\\\"v\\\":\\\"cudaLaunchKernel\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":2,\\\"v\\\":\\\"gemv\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":3,\\\"v\\\":\\\"extra_mm\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":4,\\\"v\\\":\\\"warm_kernel\\\"}\"\n"
        " srand(pid); corr = 1\n"
        " for (i = 0; i < 10; i++) { s = 10000000 + i * 50000000\n"
        "  nk = 2 + (extra != \"\") + (firstx != \"\" && i == 0)\n"
        "  printf \"{\\\"t\\\":\\\"ms\\\",\\\"id\\\":%d,\\\"ts\\\":%s,\\\"tid\\\":1,"
        "\\\"n\\\":0}\\n\", i + 1, T(s)\n"
        "  for (j = 0; j < nk; j++) { a = s + 1000 + j * 100000\n"
        "   nm = (j < 2 ? 2 : (j == 2 && extra != \"\" ? 3 : 4))\n"
        "   printf \"{\\\"t\\\":\\\"a\\\",\\\"s\\\":%s,\\\"e\\\":%s,\\\"tid\\\":1,"
        "\\\"corr\\\":%d,\\\"n\\\":1}\\n\", T(a), T(a + 2000), corr\n"
        "   printf \"{\\\"t\\\":\\\"k\\\",\\\"s\\\":%s,\\\"e\\\":%s,\\\"dev\\\":0,"
        "\\\"str\\\":7,\\\"corr\\\":%d,\\\"n\\\":%d}\\n\", T(a + 3000), "
        "T(a + 3000 + k + int(rand() * 20)), corr, nm\n"
        "   corr++ }\n"
        "  printf \"{\\\"t\\\":\\\"me\\\",\\\"id\\\":%d,\\\"ts\\\":%s,\\\"tid\\\":1}\\n\", "
        "i + 1, T(s + 40000000) }\n"
        " print \"{\\\"type\\\":\\\"footer\\\",\\\"dropped\\\":0}\" }' > \"$out\"\n"
        "fi\n"
        "b=$(awk -v sec=$sec -v ns=$ns \"$F\"' BEGIN { print U(1000000) }')\n"
        "e=$(awk -v sec=$sec -v ns=$ns \"$F\"' BEGIN { print U(550000000) }')\n"
        "v=$(awk -v s=\"$SPEED\" -v z=\"${NOISE:-0}\" -v n=$n "
        "'BEGIN{printf \"%.5f\", s*(1+z*((n%3)-1))}')\n"
        "echo \"{\\\"event\\\":\\\"begin\\\",\\\"unix_s\\\":$b}\" >> \"$VOUCH_METRICS\"\n"
        "echo \"{\\\"event\\\":\\\"end\\\",\\\"unix_s\\\":$e}\" >> \"$VOUCH_METRICS\"\n"
        "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"better\\\":\\\"higher\\\"}\" "
        ">> \"$VOUCH_METRICS\"\n");
  }
  Res Vouch(const std::string& cmd, const std::string& args, const std::string& env = "",
            bool traced = true) const {
    return testing_util::Shell(fmt::format(
        "cd {} && {} VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {} --min-busy-readings 3 "
        "--min-busy-pct 10 {} {}",
        D(), env, D(), D("sim.jsonl"), VOUCH_BINARY, cmd,
        traced ? fmt::format("--gpu-trace-lib {}", VOUCH_BINARY) : std::string(), args));
  }
  std::map<std::string, double> LegMetrics(const std::string& run, int i) const {
    std::map<std::string, double> m;
    const nlohmann::json rec = Json(run + "/record.json");  // alive through the loop
    for (const auto& x : rec["legs"][i]["metrics"])
      if (x.contains("value")) m[x["name"]] = x["value"];
    return m;
  }
};

// Issue 23 item 6: the estimate per traced leg, by the header's mode, with the override and
// the warning above 2 % of the region.
TEST_F(HostNoiseCli, TracerCostPerLegByModeWithOverrideAndWarning) {
  auto r = Vouch("run", "--warmup 0 --reps 1 --out r --env SPEED=100 -- ./hleg.sh");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto cost = Json("r/record.json")["legs"][0]["gpu_trace"]["tracer_cost"];
  EXPECT_EQ(cost["api"], "launch") << cost.dump(2);
  EXPECT_EQ(cost["per_launch_ns"], 1200);
  EXPECT_EQ(cost["cost_ns"], 20 * 1200);  // 20 launches
  EXPECT_EQ(cost["warning"], "");
  // 24 us over the 549 ms region.
  EXPECT_NEAR(LegMetrics("r", 0)["gpu.tracer_cost_fraction"], 24000 / 549e6, 1e-7);
  EXPECT_FALSE(Has(r.out, "the tracer's estimated cost")) << r.out;

  auto lean =
      Vouch("run", "--warmup 0 --reps 1 --out s --env SPEED=100 --env API=off -- ./hleg.sh");
  ASSERT_EQ(lean.rc, 0) << lean.out;
  auto lc = Json("s/record.json")["legs"][0]["gpu_trace"]["tracer_cost"];
  EXPECT_EQ(lc["api"], "off");
  EXPECT_EQ(lc["per_launch_ns"], 350);
  EXPECT_EQ(lc["per_launch_source"], "H200 default, launch-API records off");

  // 1 ms per launch: 20 ms over 549 ms is 3.6 %, above the 2 % band.
  auto big = Vouch("run", "--warmup 0 --reps 1 --out t --env SPEED=100 -- ./hleg.sh",
                   "VOUCH_TRACER_LAUNCH_COST_NS=1000000");
  ASSERT_EQ(big.rc, 0) << big.out;
  EXPECT_TRUE(Has(big.out,
                  "warning: leg 1: the tracer's estimated cost is 3.6 % of the measured region "
                  "(20 launches x 1000000 ns over 549.000 ms), above 2 %"))
      << big.out;
  auto bc = Json("t/record.json")["legs"][0]["gpu_trace"]["tracer_cost"];
  EXPECT_EQ(bc["per_launch_source"], "VOUCH_TRACER_LAUNCH_COST_NS");
  EXPECT_TRUE(Json("t/record.json")["legs"][0]["valid"].get<bool>());

  auto bad =
      Vouch("run", "--warmup 0 --reps 1 --out u -- ./hleg.sh", "VOUCH_TRACER_LAUNCH_COST_NS=fast");
  EXPECT_EQ(bad.rc, 64) << bad.out;
  EXPECT_TRUE(Has(bad.out, "VOUCH_TRACER_LAUNCH_COST_NS=fast: not a number of nanoseconds"))
      << bad.out;
}

// Issue 23 item 5: a host-bound baseline names the GPU-time headline, with both spreads.
TEST_F(HostNoiseCli, BaselineSaysHostNoiseWithBothSpreads) {
  auto r = Vouch("baseline",
                 "--trials 3 --baseline b.json --headline tok_s --env SPEED=100 --env NOISE=0.05 "
                 "-- ./hleg.sh");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "vouch baseline: warning: host noise: the GPU was active 0.073 % of the "
                  "measured region (median over legs), and tok_s spread 5.0 % leg to leg "
                  "against 0.0"))
      << r.out;
  EXPECT_TRUE(Has(r.out,
                  "for gpu.active_ns_per.decode_step (GPU time per NVTX range instance): the wall "
                  "clock carries the host's noise; the GPU-time headline is "
                  "gpu.active_ns_per.decode_step (--headline gpu.active_ns_per.decode_step)"))
      << r.out;
  auto b = Json("b.json");
  EXPECT_TRUE(Has(b.dump(), "host noise: the GPU was active 0.073 %")) << b.dump(2);
}

// Issue 23 item 5: wall clock and GPU time per step pointing opposite ways, in words.
TEST_F(HostNoiseCli, AbSaysWhenWallClockAndGpuTimePointOppositeWays) {
  auto r =
      Vouch("ab",
            "--a-env SPEED=100 --b-env SPEED=110 --b-env EXTRA=1 --a-env NOISE=0.04 "
            "--b-env NOISE=0.04 --pairs 4 --seed 4 --band 1 --headline tok_s --out r --markdown "
            "pr.md -- "
            "./hleg.sh");
  EXPECT_TRUE(r.rc == 0 || r.rc == 2) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "- the wall clock and GPU time per step point opposite ways: B did 50.0 % more "
                  "GPU work per step (gpu.active_ns_per.decode_step median"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "yet had the higher median tok_s (")) << r.out;
  EXPECT_TRUE(Has(r.out, "), under host noise (tok_s spread ")) << r.out;
  EXPECT_TRUE(Has(r.out, "- host noise: the GPU was active 0.0")) << r.out;
  auto v = Json("r/record.json")["extra"]["verdict"];
  EXPECT_TRUE(v["host_noise"]["host_bound"].get<bool>()) << v.dump(2);
  EXPECT_EQ(v["host_noise"]["gpu_metric"], "gpu.active_ns_per.decode_step");
  EXPECT_TRUE(v["host_noise"].contains("opposite_ways"));
  std::ifstream md(D("pr.md"));
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(text, "- the wall clock and GPU time per step point opposite ways")) << text;
  EXPECT_TRUE(Has(text, "- host noise: the GPU was active 0.0")) << text;
}

// Issue 22 item 9: an undecided gate's advice is about more trials than it used, and points at
// --gpu-trace; leg numbers from 1 in the HTML report.
TEST_F(HostNoiseCli, InconclusiveGateAdvisesMoreThanItUsedAndPointsAtGpuTrace) {
  // Tok/s at 1 % noise: a change of -2 % (interval across the 3 % threshold) and one of
  // exactly -3 % (on it). The advice before: "about 3 baseline trials and gate legs" after 5.
  auto b = Vouch("baseline",
                 "--trials 5 --baseline b.json --headline tok_s --env SPEED=100 --env NOISE=0.01 "
                 "-- ./hleg.sh",
                 "", false);
  ASSERT_EQ(b.rc, 0) << b.out;
  auto g = Vouch("gate",
                 "--baseline b.json --reps 3 --out g --env SPEED=98 --env NOISE=0.01 -- ./hleg.sh",
                 "", false);
  EXPECT_EQ(g.rc, 2) << g.out;
  const std::string tail =
      " gate legs in all would likely resolve it (this gate had 5 trials and 3 legs)";
  auto at = g.out.find(tail);
  ASSERT_NE(at, std::string::npos) << g.out;
  auto about = g.out.rfind("about ", at);
  ASSERT_NE(about, std::string::npos) << g.out;
  EXPECT_GT(std::stoi(g.out.substr(about + 6)), 5) << g.out;
  EXPECT_TRUE(Has(g.out,
                  "vouch gate: if the GPU is busy a small share of the measured region (a "
                  "host-bound loop), the wall clock carries the host's noise: run with "
                  "--gpu-trace and gate on gpu.active_ns_per.RANGE"))
      << g.out;
  std::ofstream(D("count")) << "5\n";  // the same three multipliers again
  auto on = Vouch("gate",
                  "--baseline b.json --reps 3 --out h --env SPEED=97 --env NOISE=0.01 -- ./hleg.sh",
                  "", false);
  EXPECT_EQ(on.rc, 2) << on.out;
  EXPECT_TRUE(Has(on.out,
                  "no practical number of trials and legs resolves it (this gate had 5 trials "
                  "and 3 legs)"))
      << on.out;

  // The HTML report numbers legs from 1: through the binary where it has its chart library,
  // and always through the renderer it calls (with stand-in assets).
  auto html = testing_util::Shell(fmt::format("cd {} && {} report g -o g.html", D(), VOUCH_BINARY));
  std::string page;
  if (Has(html.out, "built without the report's chart library")) {
    EXPECT_EQ(html.rc, 1) << html.out;
    auto rec = ReadRecordJson(D("g"));
    ASSERT_TRUE(rec.ok());
    AttachLegSeries(*rec, D("g"));
    auto r = RenderRecordReport(*rec, {true, "1.6.32", "/*U*/", "/*C*/", "/*A*/", "/*S*/"});
    ASSERT_TRUE(r.ok()) << r.error().message;
    page = *r;
  } else {
    ASSERT_EQ(html.rc, 0) << html.out;
    std::ifstream in(D("g.html"));
    page.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_TRUE(Has(page, "<tr class=\"\"><td>1</td><td>run</td>")) << page.substr(0, 3000);
  EXPECT_TRUE(Has(page, "<td>4</td><td>run</td>"));
  EXPECT_FALSE(Has(page, "<td>0</td><td>run</td>"));
  EXPECT_TRUE(Has(page, "leg 1 run warmup: window")) << page.substr(0, 3000);
  EXPECT_FALSE(Has(page, "leg 0 run"));
}

// Issue 22 item 9: a first instance off the common mix is named, not averaged into 0.10.
TEST_F(HostNoiseCli, KernelCountsNameTheInstancesThatDiffer) {
  auto r = Vouch("ab",
                 "--a-env SPEED=100 --b-env SPEED=100 --a-env FIRSTX=1 --b-env FIRSTX=1 "
                 "--b-env EXTRA=1 --pairs 4 --seed 1 --band 1 --headline "
                 "gpu.active_ns_per.decode_step --out r --markdown pr.md -- ./hleg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(
      Has(r.out,
          "note: arm A (each of its 4 traced legs): 1 of 10 'decode_step' instances ran another "
          "kernel mix than the rest: instance 1 (3 kernels); the counts below are the "
          "common mix's"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "clock windows: arm A legs 3,6,7,10, arm B legs 4,5,8,9")) << r.out;
  std::ifstream md(D("pr.md"));
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(text, "| added | 0 | 1 |")) << text;
  EXPECT_TRUE(Has(text, "| same | 0 | 0 |")) << text;  // warm_kernel: instance 1 only
  EXPECT_FALSE(Has(text, "| 0.10 |")) << text;
}

}  // namespace
}  // namespace vouch
