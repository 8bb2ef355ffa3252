// --gpu-trace through the real binary on the simulated device. No GPU and no CUPTI here: the
// "tracer" named by --gpu-trace-lib is any ELF file (vouch itself), and the leg script writes
// the trace the real tracer would (its JSON lines, docs/gpu-trace.md) to $VOUCH_GPU_TRACE.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;

class GpuTraceCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::copy_file(kBusy, D("sim.jsonl"));
    // A leg: 10 decode_step ranges of 2 gemv kernels (KDUR ns each), EXTRA adds a third
    // kernel per step; its measured region spans them; tok_s = SPEED (+- 0.2 %).
    // Timestamps are written as SECONDS and a 9-digit nanosecond part: no float arithmetic.
    Script(
        "gleg.sh",
        "now=$(date +%s%N); sec=${now%?????????}; ns=${now#$sec}; sleep 0.6\n"
        "out=$(echo \"$VOUCH_GPU_TRACE\" | sed \"s/%p/$$/\")\n"
        "F='function T(o, x) { x = ns + o; return sprintf(\"%d%09d\", sec + int(x / 1e9), x % 1e9) "
        "} function U(o, x) { x = ns + o; return sprintf(\"%d.%09d\", sec + int(x / 1e9), x % "
        "1e9) }'\n"
        "awk -v sec=$sec -v ns=$ns -v pid=$$ -v k=${KDUR:-20000} -v extra=\"$EXTRA\" \"$F\"' "
        "BEGIN {\n"
        " printf \"{\\\"type\\\":\\\"header\\\",\\\"format\\\":\\\"vouch-gpu-trace\\\","
        "\\\"version\\\":1,\\\"pid\\\":%d,\\\"timestamp_offset_ns\\\":0,\\\"ok\\\":true}\\n\", "
        "pid\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":0,\\\"v\\\":\\\"decode_step\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":1,\\\"v\\\":\\\"cudaLaunchKernel\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":2,\\\"v\\\":\\\"gemv\\\"}\"\n"
        " print \"{\\\"t\\\":\\\"n\\\",\\\"id\\\":3,\\\"v\\\":\\\"extra_mm\\\"}\"\n"
        " srand(pid); corr = 1; nk = 2 + (extra != \"\")\n"
        " for (i = 0; i < 10; i++) { s = 10000000 + i * 50000000\n"
        "  printf \"{\\\"t\\\":\\\"ms\\\",\\\"id\\\":%d,\\\"ts\\\":%s,\\\"tid\\\":1,"
        "\\\"n\\\":0}\\n\", i + 1, T(s)\n"
        "  for (j = 0; j < nk; j++) { a = s + 1000 + j * 100000\n"
        "   printf \"{\\\"t\\\":\\\"a\\\",\\\"s\\\":%s,\\\"e\\\":%s,\\\"tid\\\":1,"
        "\\\"corr\\\":%d,\\\"n\\\":1}\\n\", T(a), T(a + 2000), corr\n"
        "   printf \"{\\\"t\\\":\\\"k\\\",\\\"s\\\":%s,\\\"e\\\":%s,\\\"dev\\\":0,"
        "\\\"str\\\":7,\\\"corr\\\":%d,\\\"n\\\":%d}\\n\", T(a + 3000), "
        "T(a + 3000 + k + int(rand() * 20)), corr, (j == 2 ? 3 : 2)\n"
        "   corr++ }\n"
        "  printf \"{\\\"t\\\":\\\"me\\\",\\\"id\\\":%d,\\\"ts\\\":%s,\\\"tid\\\":1}\\n\", "
        "i + 1, T(s + 40000000) }\n"
        " print \"{\\\"type\\\":\\\"footer\\\",\\\"dropped\\\":0}\" }' > \"$out\"\n"
        "b=$(awk -v sec=$sec -v ns=$ns \"$F\"' BEGIN { print U(1000000) }')\n"
        "e=$(awk -v sec=$sec -v ns=$ns \"$F\"' BEGIN { print U(550000000) }')\n"
        "v=$(awk -v s=\"$SPEED\" -v r=\"$(od -An -N2 -tu2 /dev/urandom)\" "
        "'BEGIN{printf \"%.5f\", s*(1+(r/65535-0.5)*0.004)}')\n"
        "echo \"{\\\"event\\\":\\\"begin\\\",\\\"unix_s\\\":$b}\" >> \"$VOUCH_METRICS\"\n"
        "echo \"{\\\"event\\\":\\\"end\\\",\\\"unix_s\\\":$e}\" >> \"$VOUCH_METRICS\"\n"
        "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"better\\\":\\\"higher\\\"}\" "
        ">> \"$VOUCH_METRICS\"\n");
  }
  Res Vouch(const std::string& cmd, const std::string& args) const {
    return testing_util::Shell(
        fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {} --min-busy-readings 3 "
                    "--min-busy-pct 10 --gpu-trace-lib {} {}",
                    D(), D(), D("sim.jsonl"), VOUCH_BINARY, cmd, VOUCH_BINARY, args));
  }
  nlohmann::json Verdict(const std::string& rel) const {
    std::ifstream in(D(rel) + "/record.json");
    return nlohmann::json::parse(in)["extra"]["verdict"];
  }
};

TEST_F(GpuTraceCli, RunGivesGpuMetricsAndAttributedTraces) {
  auto r =
      Vouch("run", "--warmup 0 --reps 1 --out r --env SPEED=100 --env KDUR=20000 -- ./gleg.sh");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto rec = Json("r/record.json");
  const auto& leg = rec["legs"][0];
  ASSERT_TRUE(leg["valid"].get<bool>()) << leg.dump(2);
  std::map<std::string, double> m;
  for (const auto& x : leg["metrics"])
    if (x.contains("value")) m[x["name"]] = x["value"];
  EXPECT_EQ(m["gpu.kernels"], 20);
  EXPECT_EQ(m["gpu.launches"], 20);
  EXPECT_NEAR(m["gpu.active_ns"], 400000, 400);  // 20 kernels of 20 us (+ up to 19 ns)
  EXPECT_NEAR(m["gpu.active_ns_per.decode_step"], 40000, 40);
  EXPECT_EQ(m["gpu.kernels_per.decode_step"], 2);
  EXPECT_EQ(leg["gpu_trace"]["clock_window"]["arm"], "run");
  EXPECT_TRUE(fs::exists(D("r/legs/001-run-measured/gpu-trace.json")));
  std::string trace;
  for (const auto& e : fs::directory_iterator(D("r/legs/001-run-measured")))
    if (e.path().filename().string().rfind("gpu-trace.", 0) == 0 &&
        e.path().extension() == ".jsonl")
      trace = e.path().string();
  ASSERT_FALSE(trace.empty());
  auto s = testing_util::Shell(
      fmt::format("{} trace summarize {} --window decode_step", VOUCH_BINARY, trace));
  EXPECT_EQ(s.rc, 0) << s.out;
  EXPECT_TRUE(Has(s.out, "clock: clock window: leg 1 (run measured), window valid")) << s.out;
  auto ext = testing_util::Shell(fmt::format(
      "{} trace summarize {}/tests/data/trace/cupti_small.jsonl", VOUCH_BINARY, VOUCH_SOURCE_DIR));
  EXPECT_TRUE(Has(ext.out, "clock: unattributed: no clock window")) << ext.out;
}

TEST_F(GpuTraceCli, AbExplainsWhatMovedOnTheGpu) {
  auto r = Vouch("ab",
                 "--a-env SPEED=100 --b-env SPEED=100 --b-env EXTRA=1 --a-env KDUR=20000 "
                 "--b-env KDUR=20000 --pairs 4 --seed 1 --band 1 --headline "
                 "gpu.active_ns_per.decode_step --out r --markdown pr.md -- ./gleg.sh");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: B slower")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "GPU: behavioural control moved: the kernel multiset per instance of "
                  "NVTX range 'decode_step' differs in 1 kernel name(s) (extra_mm: 0 -> 1)"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "clock windows: arm A legs")) << r.out;
  auto v = Verdict("r");
  ASSERT_TRUE(v.contains("gpu")) << v.dump(2);
  EXPECT_EQ(v["gpu"]["identity"], "moved");
  EXPECT_EQ(v["gpu"]["kernels"][0]["name"], "extra_mm");
  EXPECT_EQ(v["gpu"]["kernels"][0]["status"], "added");
  EXPECT_NEAR(v["gpu"]["kernels"][0]["share_pct"].get<double>(), 100.0, 1.0);
  std::ifstream md(D("pr.md"));
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(text, "### What ran on the GPU")) << text;
  EXPECT_TRUE(Has(text, "| added | 0 | 1 | 0 ns | 20.0 us | +20.0 us |")) << text;
}

TEST_F(GpuTraceCli, IdenticalKernelsRefuseAVerdictUnlessTheChangeIsNotOnTheGpu) {
  std::string arms =
      "--a-env SPEED=100 --b-env SPEED=90 --pairs 4 --seed 2 --band 1 --headline tok_s -- "
      "./gleg.sh";
  auto r = Vouch("ab", "--out r " + arms);
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: refused")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "refused: the statistics gave a direction, but identity: arms A and B ran "
                  "the same kernels"))
      << r.out;
  auto ok = Vouch("ab", "--change-not-on-gpu --out s " + arms);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(Has(ok.out, "A/B verdict: B slower")) << ok.out;
  EXPECT_TRUE(Has(ok.out, "identity of the kernels accepted")) << ok.out;
}

TEST_F(GpuTraceCli, MissingTracerIsAClearError) {
  auto r = testing_util::Shell(
      fmt::format("cd {} && VOUCH_SIM={} {} run --gpu-trace-lib {}/nope.so --out r -- ./gleg.sh",
                  D(), D("sim.jsonl"), VOUCH_BINARY, D()));
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "--gpu-trace-lib " + D() + "/nope.so: not a file")) << r.out;
  auto e = testing_util::Shell(fmt::format(
      "cd {} && VOUCH_CUPTI_LIB={}/gleg.sh VOUCH_SIM={} {} clock sample --gpu-trace -- true", D(),
      D(), D("sim.jsonl"), VOUCH_BINARY));
  EXPECT_EQ(e.rc, 64) << e.out;
  EXPECT_TRUE(Has(e.out, "VOUCH_CUPTI_LIB: " + D() + "/gleg.sh: not a shared library")) << e.out;
}

}  // namespace
}  // namespace vouch
