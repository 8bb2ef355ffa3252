#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "telemetry/device.h"
#include "telemetry/sampler.h"

namespace vouch {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("vouch_sim_test_" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(SimDevice, DefaultsToTheFixtureH200AndSaysItIsSimulated) {
  auto d = OpenSimulated(VOUCH_FIXTURES_DIR "/nvml_h200_scenario.jsonl", "", 0);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE((*d)->Simulated());
  EXPECT_NE((*d)->Describe().find("simulated"), std::string::npos);
  EXPECT_EQ((*d)->Count(), 1);
  auto st = (*d)->Static(0);
  EXPECT_EQ(st.driver_version, "580.159.04");
  EXPECT_EQ(st.max_sm_mhz, 1980);
  EXPECT_EQ(st.persistence, true);
  auto s = (*d)->Poll(0);
  EXPECT_EQ(s.sm_mhz, 1980);
  EXPECT_EQ(s.reasons, 1u);
}

TEST(SimDevice, ReplaysFromAnOffsetAndManyGpus) {
  std::string text;
  for (int i = 0; i < 100; ++i)
    for (int g = 0; g < 3; ++g)
      text += fmt::format(
          "{{\"gpu\":{},\"t_s\":{:.2f},\"sm_mhz\":{},\"util_gpu_pct\":90,\"reasons\":0}}\n", g,
          i * 0.01, 1000 + g * 100 + (i >= 50 ? 1 : 0));
  auto path = Write("multi.jsonl", text);
  auto d = OpenSimulated(path, "", 0.755);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)->Count(), 3);
  EXPECT_EQ((*d)->Poll(2).sm_mhz, 1201);
  EXPECT_EQ((*d)->Static(1).uuid, "GPU-SIMULATED-1");
}

TEST(SimDevice, StaticFileSetsStateProcessesAndLockPermission) {
  auto path = Write("st.jsonl", "{\"t_s\":0,\"sm_mhz\":1500,\"util_gpu_pct\":50,\"reasons\":0}\n");
  auto st = Write("st.json",
                  R"({"boot_id":"boot-xyz","lock_clocks":"no_permission",
                      "gpus":[{"uuid":"GPU-abc","max_sm_mhz":1755}],
                      "processes":{"0":[{"pid":4242,"name":"python3","used_bytes":1000}]}})");
  auto d = OpenSimulated(path, st, 0);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)->BootId(), "boot-xyz");
  EXPECT_EQ((*d)->Static(0).uuid, "GPU-abc");
  EXPECT_EQ((*d)->Static(0).max_sm_mhz, 1755);
  EXPECT_EQ((*d)->Static(0).driver_version, "580.159.04");  // defaults kept
  auto procs = (*d)->Processes(0);
  ASSERT_TRUE(procs.ok());
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].pid, 4242u);
  auto lock = (*d)->LockClocks(0, 1500);
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.error().message.find("Insufficient Permissions"), std::string::npos);
}

TEST(SimDevice, ClockLockingOnlyOnTheSimulatedDevice) {
  auto path = Write("lk.jsonl", "{\"t_s\":0,\"sm_mhz\":1980,\"util_gpu_pct\":50,\"reasons\":0}\n");
  auto d = OpenSimulated(path, "", 0);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->LockClocks(0, 1650).ok());
  EXPECT_EQ((*d)->Poll(0).sm_mhz, 1650);
  ASSERT_TRUE((*d)->ResetClocks(0).ok());
  EXPECT_EQ((*d)->Poll(0).sm_mhz, 1980);
}

TEST(SimDevice, BadStreamsAreErrorsThatNameTheFile) {
  auto empty = Write("empty.jsonl", "");
  auto d = OpenSimulated(empty, "", 0);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find(empty), std::string::npos);
  auto gap = Write("gap.jsonl", "{\"gpu\":1,\"t_s\":0}\n");
  auto g = OpenSimulated(gap, "", 0);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("GPU 0 has no samples"), std::string::npos);
}

// A driver reading keeps its timestamp from one fetch to the next, across the stream's loop
// too: a reading fetched twice is one reading (the sampler asks for those after the newest it
// kept, and a stamp that moved by microseconds made a second one, which no poll then saw:
// RunCli.SlowPollingReportsTheReadingsItMisses failed once in CI on "1 missed").
TEST(SimDevice, DriverReadingsKeepTheirStampsFromFetchToFetch) {
  std::string text;
  for (int i = 0; i < 100; ++i)  // 1 s; the power steps every 0.1 s, and differs at the wrap
    text += fmt::format(
        "{{\"t_s\":{:.2f},\"sm_mhz\":1980,\"power_mw\":{},\"util_gpu_pct\":100,\"reasons\":0}}\n",
        i * 0.01, 100000 + 1000 * (i / 10));
  auto path = Write("driver.jsonl", text);
  auto d = OpenSimulated(path, "", 0.6);
  ASSERT_TRUE(d.ok()) << d.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past the loop's end (1.0 s)
  auto a = (*d)->DriverSamples(0, DriverQuantity::kPower, 0);
  ASSERT_TRUE(a.ok()) << a.error().message;
  // Many fetches at once: each must give the same stamps (a clock read at each fetch moved
  // them by a microsecond now and then).
  int moved = 0;
  for (int k = 0; k < 2000; ++k) {
    auto c = (*d)->DriverSamples(0, DriverQuantity::kPower, 0);
    ASSERT_TRUE(c.ok()) << c.error().message;
    for (std::size_t i = 0; i < a->size() && i < c->size(); ++i)
      if ((*c)[i].timestamp_us != (*a)[i].timestamp_us) ++moved;
  }
  EXPECT_EQ(moved, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto b = (*d)->DriverSamples(0, DriverQuantity::kPower, 0);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_GE(a->size(), 10u);
  ASSERT_GT(b->size(), a->size());  // at least one more step came
  for (std::size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].timestamp_us, (*b)[i].timestamp_us) << i;
    EXPECT_EQ((*a)[i].value, (*b)[i].value) << i;
  }
  for (std::size_t i = 1; i < b->size(); ++i)  // the driver's period, the wrap included
    EXPECT_NEAR(static_cast<double>((*b)[i].timestamp_us - (*b)[i - 1].timestamp_us), 100000, 100)
        << i;
}

// A long stream (100,000 samples, 1,000 s) read far into it: the driver's readings are the
// stream's updates of the last 2.4 s (found by bisection, not a scan of the whole stream),
// each with the value the stream has at its time.
TEST(SimDevice, DriverReadingsOfALongStreamAreTheLastOnesAtTheirValues) {
  std::string text;
  for (int i = 0; i < 100000; ++i)  // power changes every other sample (20 ms)
    text += fmt::format("{{\"t_s\":{:.2f},\"power_mw\":{},\"util_gpu_pct\":50}}\n", i * 0.01,
                        100000 + i / 2);
  auto path = Write("long.jsonl", text);
  auto d = OpenSimulated(path, "", 500.0);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto p = (*d)->DriverSamples(0, DriverQuantity::kPower, 0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_GE(p->size(), 100u);  // 2.4 s of 20 ms updates: 119 or 120, fewer on a stalled machine
  ASSERT_LE(p->size(), 121u);
  const double last = (*p).back().value;  // at stream time 500 s and a little
  EXPECT_GE(last, 100000 + 500 / 0.02 - 1);
  EXPECT_LE(last, 100000 + 510 / 0.02);
  for (std::size_t i = 1; i < p->size(); ++i) {
    EXPECT_EQ((*p)[i].value, (*p)[i - 1].value + 1) << i;
    EXPECT_NEAR(static_cast<double>((*p)[i].timestamp_us - (*p)[i - 1].timestamp_us), 20000, 2)
        << i;
  }
  // The utilization never changes: one update, the stream's first sample, long gone.
  auto u = (*d)->DriverSamples(0, DriverQuantity::kGpuUtil, 0);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_TRUE(u->empty());
  EXPECT_FALSE((*d)->DriverSamples(0, DriverQuantity::kMemUtil, 0).ok());  // none in the stream
}

TEST(Sampler, StreamsSamplesAndProcessesToJsonl) {
  auto path = Write("smp.jsonl", "{\"t_s\":0,\"sm_mhz\":1980,\"util_gpu_pct\":50,\"reasons\":0}\n");
  auto st =
      Write("smp.json", R"({"processes":{"0":[{"pid":7,"name":"bench","used_bytes":2048}]}})");
  auto d = OpenSimulated(path, st, 0);
  ASSERT_TRUE(d.ok());
  auto out = (std::filesystem::temp_directory_path() / "vouch_sampler_out.jsonl").string();
  Sampler s(**d, SamplerOptions{{0}, 0.005, 0.02, out, 0.05});
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE(s.Stop().ok());
  auto samples = s.Samples();
  EXPECT_GE(samples.size(), 5u);
  EXPECT_EQ(s.PeakDeviceMemory({7}), std::optional<std::uint64_t>(2048));
  EXPECT_FALSE(s.PeakDeviceMemory({8}).has_value());
  auto back = ReadSampleStream(out);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->size(), samples.size());
  EXPECT_GT(s.Stats().polls, 0);
}

TEST(Sampler, UnknownGpuIsAnError) {
  auto path = Write("one.jsonl", "{\"t_s\":0}\n");
  auto d = OpenSimulated(path, "", 0);
  ASSERT_TRUE(d.ok());
  Sampler s(**d, SamplerOptions{{3}, 0.01, 0.1, "", 0.5});
  auto r = s.Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("GPU 3 does not exist"), std::string::npos);
}

}  // namespace
}  // namespace vouch
