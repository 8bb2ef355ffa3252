// vouch run / show / baseline / gate / arms, driven through the real binary on the
// simulated device. Short legs use a lower busy-reading floor (--min-busy-readings 5).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
const std::string kScenario = VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;
const auto& Sh = testing_util::Shell;

class RunCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, const std::string& sim = kBusy,
            const std::string& env = "") const {
    return Sh(fmt::format("cd {} && {} VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}", D(), env, D(),
                          sim, VOUCH_BINARY, args));
  }
  nlohmann::json Record(const std::string& rel) const { return Json(rel + "/record.json"); }
  // `PREFIX vouch run ... --reps REPS --out OUT -- sleep LEG_S` in a script's background (where
  // SIGINT and SIGQUIT are ignored), sent SIGNALS ("INT QUIT": kill -INT, then -QUIT) once LEGS
  // legs are in its journal; prints "rc=N".
  Res RunSignalled(const std::string& prefix, int reps, const std::string& out, double leg_s,
                   int legs, const std::string& signals) const;
};

constexpr const char* kFast = "--min-busy-readings 5";

Res RunCli::RunSignalled(const std::string& prefix, int reps, const std::string& out, double leg_s,
                         int legs, const std::string& signals) const {
  return Sh(fmt::format(
      "cd {0} && (VOUCH_LOCK_FILE={0}/lock VOUCH_SIM={1} {2} {3} run {4} --warmup 0 --reps {5} "
      "--out {6} -- sleep {7} >{6}.txt 2>&1 & p=$!; for i in $(seq 300); do [ \"$(cat "
      "{6}/legs.jsonl 2>/dev/null | wc -l)\" -ge {8} ] && break; sleep 0.1; done; for s in {9}; "
      "do kill -$s $p; done; wait $p; echo rc=$?)",
      D(), kBusy, prefix, VOUCH_BINARY, kFast, reps, out, leg_s, legs, signals));
}

TEST_F(RunCli, WarmupDiscardedMeasuredSummarizedAndShownAgain) {
  Script("leg.sh",
         "sleep 0.8\necho "
         "'{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\",\"better\":\"higher\"}' >> "
         "\"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format("run {} --warmup 1 --reps 3 --out r -- ./leg.sh", kFast));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = Record("r");
  EXPECT_EQ(j["status"], "complete");
  ASSERT_EQ(j["legs"].size(), 4u);
  EXPECT_EQ(j["legs"][0]["role"], "warmup");
  EXPECT_EQ(j["legs"][0]["discard_cause"], "warmup");
  EXPECT_EQ(j["valid_legs"], 3);
  EXPECT_EQ(j["summary"]["run"][0]["name"], "tok_s");
  EXPECT_EQ(j["summary"]["run"][0]["median"], 100.0);
  EXPECT_EQ(j["summary"]["run"][0]["n"], 3);
  EXPECT_EQ(j["environment"]["simulated"], true);
  EXPECT_TRUE(Has(j["recipe"]["reproduce"].get<std::string>(), " vouch --sim ")) << j["recipe"];
  EXPECT_TRUE(Has(j["recipe"]["reproduce"].get<std::string>(), " run ")) << j["recipe"];
  EXPECT_TRUE(fs::exists(D("r/legs/002-run-measured/samples.jsonl")));
  EXPECT_TRUE(fs::exists(D("r/legs/002-run-measured/window.json")));
  auto show = Vouch("show r");
  EXPECT_EQ(show.rc, 0);
  EXPECT_TRUE(Has(show.out, "3 of 3 measured legs valid")) << show.out;
  EXPECT_TRUE(Has(show.out, "SIMULATED DEVICE"));
}

TEST_F(RunCli, HostileLegsAreRecordedNeverNumbers) {
  Script("nometric.sh", "sleep 0.7\necho done\n");
  auto a = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out a --metric channel#tok_s -- ./nometric.sh", kFast));
  EXPECT_EQ(a.rc, 1) << a.out;
  EXPECT_TRUE(Has(a.out, "tok_s")) << a.out;
  EXPECT_EQ(Record("a")["valid_legs"], 0);

  Script("nan.sh",
         "sleep 0.7\necho "
         "'{\"name\":\"tok_s\",\"value\":NaN,\"unit\":\"tok/s\",\"better\":\"higher\"}' >> "
         "\"$VOUCH_METRICS\"\n");
  auto b = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out b -- ./nan.sh", kFast));
  EXPECT_EQ(b.rc, 1) << b.out;
  EXPECT_TRUE(Record("b")["summary"]["run"].empty());

  auto c =
      Vouch(fmt::format("run {} --warmup 0 --reps 1 --timeout 0.8 --out c -- sleep 60", kFast));
  EXPECT_EQ(c.rc, 1) << c.out;
  EXPECT_TRUE(Has(Record("c")["legs"][0]["result"]["outcome"].get<std::string>(), "timed out"));

  Script("fork.sh", "sleep 0.7\n(sleep 300 &)\necho parent-done\n");
  auto d = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out d -- ./fork.sh", kFast));
  auto leg = Record("d")["legs"][0];
  ASSERT_GE(leg["result"]["leftover_processes"].size(), 1u) << d.out;
  int pid = leg["result"]["leftover_processes"][0]["pid"];
  EXPECT_NE(::kill(pid, 0), 0) << "the child that outlived its leg must be killed";

  Script("flood.sh", "head -c 50000000 /dev/zero\nsleep 0.7\n");
  auto e = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out e -- ./flood.sh", kFast));
  EXPECT_EQ(e.rc, 0) << e.out;
  EXPECT_EQ(fs::file_size(D("e/legs/001-run-measured/stdout.txt")), 50000000u);
  EXPECT_EQ(Record("e")["legs"][0]["result"]["stdout"]["bytes"], 50000000);
}

TEST_F(RunCli, ChecksumsAndDispatchCountsAreChecked) {
  // Each leg reports a different checksum (the count of earlier legs) and 600 dispatches.
  Script("leg.sh",
         "sleep 0.7\nn=$(cat count 2>/dev/null | wc -l)\necho x >> count\n"
         "echo \"{\\\"name\\\":\\\"sum\\\",\\\"text\\\":\\\"abc$n\\\"}\" >> \"$VOUCH_METRICS\"\n"
         "echo '{\"name\":\"dispatch\",\"value\":600}' >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 2 --out r --expect-equal sum --expect dispatch=600 -- ./leg.sh",
      kFast));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "expectation violated")) << r.out;
  auto j = Record("r");
  ASSERT_EQ(j["expectation_violations"].size(), 1u);
  EXPECT_EQ(j["expectation_violations"][0]["metric"], "sum");
  auto ok = Vouch(
      fmt::format("run {} --warmup 0 --reps 2 --out s --expect dispatch=600 -- ./leg.sh", kFast));
  EXPECT_EQ(ok.rc, 0) << ok.out;
  auto bad = Vouch(
      fmt::format("run {} --warmup 0 --reps 1 --out t --expect dispatch=599 -- ./leg.sh", kFast));
  EXPECT_EQ(bad.rc, 1);
}

TEST_F(RunCli, MeasuredRegionMarkersRescueALegThatIdlesFirst) {
  // The simulated GPU idles for ~4 s, then the copy loop is busy: like a Python benchmark
  // importing for seconds before its work.
  std::string sim_env = "VOUCH_SIM_START=19.0";
  // Unmarked: 4.2 s idle then 2.5 s busy, about 40 % busy, so the start-up (and vouch's own
  // set-up time before the leg, which shifts the replay) cannot tip it over half.
  Script("slow_start.sh", "sleep 4.2\nsleep 2.5\n");
  auto plain = Vouch("run --warmup 0 --reps 1 --out plain -- ./slow_start.sh", kScenario, sim_env);
  EXPECT_EQ(plain.rc, 1) << plain.out;
  EXPECT_TRUE(Has(plain.out, "busy readings are")) << plain.out;
  EXPECT_TRUE(
      Has(Record("plain")["legs"][0]["window"]["verdict"]["notes"].dump(), "no begin/end markers"));
  Script("marked.sh",
         "sleep 4.2\necho \"{\\\"event\\\":\\\"begin\\\",\\\"unix_s\\\":$(date +%s.%N)}\" >> "
         "\"$VOUCH_METRICS\"\n"
         "sleep 3.6\necho \"{\\\"event\\\":\\\"end\\\",\\\"unix_s\\\":$(date +%s.%N)}\" >> "
         "\"$VOUCH_METRICS\"\n");
  auto marked = Vouch("run --warmup 0 --reps 1 --out marked -- ./marked.sh", kScenario, sim_env);
  EXPECT_EQ(marked.rc, 0) << marked.out;
  auto w = Record("marked")["legs"][0]["window"];
  EXPECT_FALSE(w["region"].is_null());
  EXPECT_EQ(w["verdict"]["status"], "valid");
  // The whole window is still recorded: its samples cover the idle start too.
  std::ifstream s(D("marked/legs/001-run-measured/samples.jsonl"));
  int lines = 0;
  for (std::string l; std::getline(s, l);) ++lines;
  EXPECT_GT(lines, 600);
}

// A signal vouch was started with ignored stays ignored: a run a script put in the
// background is not stopped by the Ctrl-C meant for the script (SIGINT, SIGQUIT), a run under
// nohup outlives the session (SIGHUP); SIGTERM still ends it, with its record.
TEST_F(RunCli, SignalsItWasStartedWithIgnoredStayIgnoredButSigtermEndsIt) {
  auto r = RunSignalled("nohup", 3, "r", 0.5, 1, "INT QUIT HUP");
  EXPECT_TRUE(Has(r.out, "rc=0")) << r.out;
  auto j = Record("r");
  EXPECT_EQ(j["status"], "complete");
  EXPECT_EQ(j["legs"].size(), 3u);
  auto t = RunSignalled("", 5, "t", 1, 1, "TERM");
  EXPECT_TRUE(Has(t.out, "rc=143")) << t.out;
  EXPECT_EQ(Record("t")["status"], "interrupted");
}

TEST_F(RunCli, InterruptedRunKeepsFinishedLegsAndSaysWhatIsMissing) {
  // In the background of a script SIGINT is ignored (and stays so: the test above); env gives
  // it back, as for a run in the foreground of a terminal.
  auto r = RunSignalled("env --default-signal=INT", 5, "r", 1, 2, "INT");
  EXPECT_TRUE(Has(r.out, "rc=130")) << r.out;
  auto j = Record("r");
  EXPECT_EQ(j["status"], "interrupted");
  EXPECT_GE(j["legs"].size(), 2u);
  EXPECT_TRUE(Has(j["missing"].dump(), "did not run")) << j["missing"].dump();
  EXPECT_TRUE(fs::exists(D("r/legs/001-run-measured/samples.jsonl")));
}

TEST_F(RunCli, SecretsAreRedacted) {
  auto r = Vouch(fmt::format(
      "run {} --warmup 0 --reps 1 --out r --env HF_TOKEN=hunter2 --env MODE=fast -- sleep 0.8",
      kFast));
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(D("r/record.json"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_FALSE(Has(text, "hunter2"));
  EXPECT_TRUE(Has(text, "<redacted>"));
  EXPECT_TRUE(Has(text, "\"MODE\": \"fast\""));
}

TEST_F(RunCli, BusyGpuRefusedUnlessAllowedAndRecorded) {
  fs::copy_file(kBusy, D("s.jsonl"));
  std::ofstream(D("s.jsonl.static.json"))
      << R"({"processes":{"0":[{"pid":4242,"name":"other-job"}]}})";
  auto r = Vouch("run --warmup 0 --reps 1 --out r -- sleep 0.5", D("s.jsonl"));
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(Has(r.out, "preflight refused: GPU 0 is busy: compute process 4242 (other-job)"))
      << r.out;
  auto a = Vouch(fmt::format("run {} --allow-busy --warmup 0 --reps 1 --out a -- sleep 0.8", kFast),
                 D("s.jsonl"));
  EXPECT_EQ(a.rc, 0) << a.out;
  EXPECT_EQ(Record("a")["preflight"]["busy_processes"][0]["pid"], 4242);
}

TEST_F(RunCli, BaselineThenGatePassesAndFails) {
  Script(
      "leg.sh",
      "sleep 0.7\necho \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$(cat "
      "speed),\\\"unit\\\":\\\"tok/s\\\",\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  std::ofstream(D("speed")) << "100";
  auto b = Vouch(fmt::format("baseline {} --trials 3 --baseline base.json -- ./leg.sh", kFast));
  ASSERT_EQ(b.rc, 0) << b.out;
  std::ifstream bin(D("base.json"));
  auto base = nlohmann::json::parse(bin);
  EXPECT_EQ(base["headline"], "tok_s");
  EXPECT_EQ(base["metrics"][0]["value"], 100.0);
  EXPECT_EQ(base["metrics"][0]["fail_pct"], 3.0);
  EXPECT_EQ(base["clock"]["valid"], true);
  std::ofstream(D("speed")) << "98";  // -2 %: passes
  auto pass = Vouch(fmt::format(
      "gate {} --baseline base.json --warmup 0 --reps 2 --out g1 --markdown pr.md -- ./leg.sh",
      kFast));
  EXPECT_EQ(pass.rc, 0) << pass.out;
  EXPECT_TRUE(fs::exists(D("pr.md")));
  std::ofstream(D("speed")) << "96";  // -4 %: fails
  auto fail = Vouch(
      fmt::format("gate {} --baseline base.json --warmup 0 --reps 2 --out g2 -- ./leg.sh", kFast));
  EXPECT_EQ(fail.rc, 1) << fail.out;
  EXPECT_TRUE(Has(fail.out, "fail")) << fail.out;
  // Gating a saved record gives the same verdict without running anything.
  EXPECT_EQ(Vouch("gate --baseline base.json g2").rc, 1);
  EXPECT_EQ(Vouch("gate --baseline base.json g1").rc, 0);
}

// A secondary metric only warns by default; --fail-pct and --threshold (on gate and on
// baseline) make it fail without editing the baseline file.
TEST_F(RunCli, GateThresholdsFromTheCommandLine) {
  Script("leg.sh",
         "sleep 0.7\necho \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":100,\\\"unit\\\":"
         "\\\"tok/s\\\",\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n"
         "echo \"{\\\"name\\\":\\\"prefill_ms\\\",\\\"value\\\":$(cat ms),\\\"unit\\\":"
         "\\\"ms\\\",\\\"better\\\":\\\"lower\\\"}\" >> \"$VOUCH_METRICS\"\n");
  std::ofstream(D("ms")) << "10";
  ASSERT_EQ(Vouch(fmt::format("baseline {} --trials 2 --headline tok_s --baseline base.json -- "
                              "./leg.sh",
                              kFast))
                .rc,
            0);
  std::ofstream(D("ms")) << "1000";  // 100x slower
  auto warn = Vouch(
      fmt::format("gate {} --baseline base.json --warmup 0 --reps 1 --out g -- ./leg.sh", kFast));
  EXPECT_EQ(warn.rc, 0) << warn.out;
  EXPECT_TRUE(Has(warn.out, "note: a warn never fails the gate")) << warn.out;
  auto all = Vouch("gate --baseline base.json --fail-pct 20 g");
  EXPECT_EQ(all.rc, 1) << all.out;
  EXPECT_TRUE(Has(all.out, "fail > +20%")) << all.out;
  auto one = Vouch("gate --baseline base.json --threshold prefill_ms=fail:50 g");
  EXPECT_EQ(one.rc, 1) << one.out;
  auto typo = Vouch("gate --baseline base.json --threshold prefil_ms=fail:50 g");
  EXPECT_EQ(typo.rc, 64) << typo.out;
  EXPECT_TRUE(Has(typo.out, "'prefil_ms': the baseline has no such metric")) << typo.out;
  EXPECT_EQ(Vouch("gate --baseline base.json --threshold prefill_ms g").rc, 64);
  // On baseline, the thresholds are written into the file.
  std::ofstream(D("ms")) << "10";
  ASSERT_EQ(Vouch(fmt::format("baseline {} --trials 2 --headline tok_s --baseline b2.json "
                              "--threshold prefill_ms=fail:7,warn:off -- ./leg.sh",
                              kFast))
                .rc,
            0);
  auto b2 = Json("b2.json");
  EXPECT_EQ(b2["metrics"][1]["name"], "prefill_ms");
  EXPECT_EQ(b2["metrics"][1]["fail_pct"], 7.0);
  EXPECT_TRUE(b2["metrics"][1]["warn_pct"].is_null());
  EXPECT_EQ(Vouch("gate --baseline b2.json g").rc, 1);
}

// The leg's own allocations nearly fill the GPU (seed 000, #1103): warned with the leg and kept
// in the record, the leg still valid.
TEST_F(RunCli, PeakMemoryNearTheTotalIsWarnedInTheLegAndTheRecord) {
  Script("leg.sh", "sleep 0.7\n");
  const std::string full = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy_mem_full.jsonl";
  auto r = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out r -- ./leg.sh", kFast), full);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "warning: leg 1: peak memory used 137.84 of 140.40 GiB (98.2 %) is "
                  "within 2 % of the GPU's total"))
      << r.out;
  auto j = Record("r");
  ASSERT_EQ(j["legs"][0]["window"]["verdict"]["warnings"].size(), 1u) << j["legs"][0]["window"];
  EXPECT_EQ(j["legs"][0]["window"]["policy"]["memory_margin"], 0.02);
  auto wide = Vouch(
      fmt::format("run {} --warmup 0 --reps 1 --out w --memory-margin-pct 1 -- ./leg.sh", kFast),
      full);
  EXPECT_FALSE(Has(wide.out, "peak memory used")) << wide.out;
  auto ok = Vouch(fmt::format("run {} --warmup 0 --reps 1 --out o -- ./leg.sh", kFast));
  EXPECT_FALSE(Has(ok.out, "peak memory used")) << ok.out;
}

// The noise-aware gate end to end on the simulated device: the baseline keeps its trials and
// warns that its spread cannot resolve 3 %; a noisy unchanged run is inconclusive (exit 2),
// not a false FAIL; a planted 8 % regression at 1 % noise fails.
TEST_F(RunCli, GateKnowsItsNoise) {
  Script("leg.sh",
         "sleep 0.7\nn=$(cat legcount 2>/dev/null | wc -l); echo x >> legcount\n"
         "v=$(sed -n \"$((n+1))p\" values)\n"
         "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
         "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto values = [&](const std::string& v) {
    std::ofstream(D("values")) << v;
    fs::remove(D("legcount"));
  };
  values("100\n95.6\n104.4\n");
  auto b = Vouch(fmt::format("baseline {} --trials 3 --baseline noisy.json -- ./leg.sh", kFast));
  ASSERT_EQ(b.rc, 0) << b.out;
  EXPECT_TRUE(Has(b.out, "warning: tok_s: the 3 trials spread 8.80 %")) << b.out;
  EXPECT_TRUE(Has(b.out, "trials in all (this baseline has 3) and gate --reps")) << b.out;
  EXPECT_TRUE(Has(b.out, "headline: tok_s (the first metric with a direction")) << b.out;
  auto base = Json("noisy.json");
  EXPECT_EQ(base["metrics"][0]["trials"], nlohmann::json({100.0, 95.6, 104.4}));
  // The noisy headline's warning, and where a quieter figure is (an untraced leg: --gpu-trace).
  ASSERT_EQ(base["noise_warnings"].size(), 2u);
  EXPECT_TRUE(Has(base["noise_warnings"][1].get<std::string>(), "run with --gpu-trace"));
  values("97\n101\n95\n");
  auto g = Vouch(fmt::format(
      "gate {} --baseline noisy.json --warmup 0 --reps 3 --out g1 --json -- ./leg.sh", kFast));
  EXPECT_EQ(g.rc, 2) << g.out;
  EXPECT_TRUE(Has(g.out, "\"overall\": \"inconclusive\"")) << g.out;
  EXPECT_EQ(Vouch("gate --baseline noisy.json g1").rc, 2);  // the saved record, the same answer
  values("100\n101\n99\n");
  ASSERT_EQ(
      Vouch(fmt::format("baseline {} --trials 3 --baseline quiet.json -- ./leg.sh", kFast)).rc, 0);
  values("92\n92.9\n91.3\n");
  auto f = Vouch(
      fmt::format("gate {} --baseline quiet.json --warmup 0 --reps 3 --out g2 -- ./leg.sh", kFast));
  EXPECT_EQ(f.rc, 1) << f.out;
  EXPECT_TRUE(Has(f.out, "FAIL")) << f.out;
  EXPECT_TRUE(Has(f.out, "noise: each interval is Welch's t on log values")) << f.out;
}

// --interval-ms 250 against a driver that updates every 100 ms: the window says it polled too
// slowly and counts the readings it missed, by the policy's period and by the driver's own
// timestamps (nvmlDeviceGetSamples, which the simulated device answers for power and
// utilization as the H200 does, and refuses for the clocks).
TEST_F(RunCli, SlowPollingReportsTheReadingsItMisses) {
  auto slow =
      Vouch("clock sample --min-busy-readings 5 --interval-ms 250 --quiet --out c -- sleep 3");
  // The interval is the polls' measured median: 250 ms give or take a loaded machine's jitter
  // (248 and 254 seen), so only its first digit is asserted.
  EXPECT_TRUE(Has(slow.out, "polled every 2")) << slow.out;
  EXPECT_TRUE(Has(slow.out, "ms, slower than the driver's update period (100 ms")) << slow.out;
  EXPECT_TRUE(Has(slow.out,
                  "driver readings of power (every 100 ms by the driver's own "
                  "timestamps, nvmlDeviceGetSamples)"))
      << slow.out;
  EXPECT_FALSE(Has(slow.out, "update period 250 ms measured")) << slow.out;
  auto w = Json("c/window.json");
  const auto& f = w["gpus"][0]["fold"];
  EXPECT_EQ(f["polls_slower_than_updates"], true) << f;
  EXPECT_GT(f["missed_readings"].get<int>(), f["readings"].get<int>() / 2) << f;
  ASSERT_FALSE(f["driver_samples"].empty()) << f;
  EXPECT_GT(f["driver_samples"][0]["missed"].get<int>(), 0) << f;
  EXPECT_TRUE(Has(f["driver_samples_errors"].dump(), "Not Found")) << f;
  // At the default 10 ms nothing is missed and nothing is said, unless the sampler itself was
  // starved for a driver period (a loaded CI machine can stall a thread 100 ms): then the miss
  // is real and is reported, as it must be. The polls' own timestamps tell which.
  auto fast = Vouch("clock sample --min-busy-readings 5 --quiet --out d -- sleep 2");
  std::ifstream polls(D("d/samples.jsonl"));
  double prev = 0, max_gap = 0;
  for (std::string line; std::getline(polls, line);) {
    auto p = nlohmann::json::parse(line);
    if (!p.contains("sm_mhz")) continue;  // the process-list lines
    const double t = p["unix_s"].get<double>();
    if (prev > 0) max_gap = std::max(max_gap, t - prev);
    prev = t;
  }
  ASSERT_GT(prev, 0) << "no polls in d/samples.jsonl";
  auto d = Json("d/window.json");
  if (max_gap < 0.05) {  // no reading of the 100 ms stream can fall between two polls
    EXPECT_FALSE(Has(fast.out, "the polls missed")) << fast.out;
    EXPECT_FALSE(Has(fast.out, "readings were missed")) << fast.out;
    for (const auto& x : d["gpus"][0]["fold"]["driver_samples"]) EXPECT_EQ(x["missed"], 0) << x;
  } else {
    // Starved: whatever was missed is said.
    for (const auto& x : d["gpus"][0]["fold"]["driver_samples"]) {
      if (x["missed"].get<int>() > 0) {
        EXPECT_TRUE(Has(fast.out, "the polls missed")) << fast.out;
      }
    }
  }
}

TEST_F(RunCli, BadBaselinesAreClearErrors) {
  std::ofstream(D("trunc.json")) << "{\"schema\":\"vouch.baseline\",\"schema_version\":1,\"metr";
  auto t = Vouch("gate --baseline trunc.json somewhere");
  EXPECT_EQ(t.rc, 1);
  EXPECT_TRUE(Has(t.out, "trunc.json")) << t.out;
  std::ofstream(D("future.json"))
      << R"({"schema":"vouch.baseline","schema_version":9,"metrics":[]})";
  auto f = Vouch("gate --baseline future.json somewhere");
  EXPECT_EQ(f.rc, 1);
  EXPECT_TRUE(Has(f.out, "newer")) << f.out;
  auto m = Vouch("gate --baseline missing.json somewhere");
  EXPECT_EQ(m.rc, 1);
  EXPECT_TRUE(Has(m.out, "missing.json"));
  auto both = Vouch("gate --baseline future.json rec -- true");
  EXPECT_EQ(both.rc, 64);
}

TEST_F(RunCli, ArmsRefusesOneArtifactTwiceAndHashOnlyDifferences) {
  std::ofstream(D("a.bin")) << "same bytes";
  std::ofstream(D("b.bin")) << "same bytes";
  auto same = Vouch("arms --artifact-a a.bin --artifact-b b.bin");
  EXPECT_EQ(same.rc, 1);
  EXPECT_TRUE(Has(same.out, "one artifact")) << same.out;
  std::ofstream(D("c.bin")) << "other bytes";
  auto hash_only = Vouch("arms --artifact-a a.bin --artifact-b c.bin");
  EXPECT_EQ(hash_only.rc, 1) << hash_only.out;
  auto moved = Vouch("arms --artifact-a a.bin --artifact-b c.bin --control calls 1414 808");
  EXPECT_EQ(moved.rc, 0) << moved.out;
}

}  // namespace
}  // namespace vouch
