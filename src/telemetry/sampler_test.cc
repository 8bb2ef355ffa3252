#include "telemetry/sampler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace vouch {
namespace {

std::vector<DriverSample> Grid(std::uint64_t first_us, std::uint64_t step_us, int n) {
  std::vector<DriverSample> v;
  for (int i = 0; i < n; ++i) v.push_back({first_us + step_us * static_cast<std::uint64_t>(i), 1});
  return v;
}

TEST(DriverPace, HalfOfWhatTheBufferIsSeenToHold) {
  DriverPace p;
  LearnDriverPace(Grid(1000, 20000, 120), 1.0, 10.0, &p);  // the H200's power: 2.4 s
  EXPECT_EQ(p.most_entries, 120u);
  EXPECT_EQ(p.min_step_us, 20000u);
  EXPECT_DOUBLE_EQ(p.interval_s, 119 * 0.02 / 2);
  DriverPace u;
  LearnDriverPace(Grid(1000, 200000, 80), 1.0, 10.0, &u);  // 15.8 s held
  EXPECT_DOUBLE_EQ(u.interval_s, 79 * 0.2 / 2);
  LearnDriverPace(Grid(1000, 200000, 200), 1.0, 10.0, &u);  // 39.8 s: the ceiling
  EXPECT_DOUBLE_EQ(u.interval_s, 10.0);
}

TEST(DriverPace, TheFloorUntilTwoEntriesAreSeen) {
  DriverPace p;
  LearnDriverPace({}, 1.0, 10.0, &p);
  EXPECT_DOUBLE_EQ(p.interval_s, 1.0);
  LearnDriverPace(Grid(5, 1000000, 1), 1.0, 10.0, &p);
  EXPECT_DOUBLE_EQ(p.interval_s, 1.0);
  LearnDriverPace(Grid(1000, 20000, 10), 1.0, 10.0, &p);  // 0.18 s held: under the floor
  EXPECT_DOUBLE_EQ(p.interval_s, 1.0);
}

TEST(DriverPace, TheMostEntriesAndTheShortestStepAreKept) {
  DriverPace p;
  LearnDriverPace(Grid(0, 200000, 100), 1.0, 30.0, &p);
  EXPECT_DOUBLE_EQ(p.interval_s, 99 * 0.2 / 2);
  LearnDriverPace(Grid(0, 200000, 10), 1.0, 30.0, &p);  // a later, smaller read: no change
  EXPECT_DOUBLE_EQ(p.interval_s, 99 * 0.2 / 2);
  // One step of 50 ms seen: the buffer may fill four times as fast.
  std::vector<DriverSample> fast = {{1000, 0}, {51000, 0}, {51000, 0}, {40000, 0}};
  LearnDriverPace(fast, 1.0, 30.0, &p);  // equal and backward stamps are not steps
  EXPECT_EQ(p.min_step_us, 50000u);
  EXPECT_DOUBLE_EQ(p.interval_s, 99 * 0.05 / 2);
}

TEST(DriverPace, ACeilingUnderTheFloorIsTheFloor) {
  DriverPace p;
  LearnDriverPace(Grid(0, 200000, 100), 2.0, 1.0, &p);
  EXPECT_DOUBLE_EQ(p.interval_s, 2.0);
}

// A device whose driver keeps rings of the last N readings at a fixed period (as NVML's
// nvmlDeviceGetSamples does), filled long before the sampler starts; the SM clock answers an
// error (as on the H200). Counts the reads of each quantity.
class RingDevice : public Device {
 public:
  struct Ring {
    std::uint64_t period_us;
    int entries;
  };
  RingDevice(Ring power, Ring util) : power_(power), util_(util) {}
  bool Simulated() const override { return true; }
  std::string Describe() const override { return "ring test device"; }
  int Count() const override { return 1; }
  StaticState Static(int) override { return {}; }
  Sample Poll(int, bool) override { return poll_; }
  Result<std::vector<GpuProcess>> Processes(int) override { return std::vector<GpuProcess>{}; }
  Result<MemoryInfo> Memory(int) override { return MemoryInfo{}; }
  std::string BootId() override { return "ring"; }
  Status LockClocks(int, int) override { return OkStatus(); }
  Status ResetClocks(int) override { return OkStatus(); }
  std::vector<std::string> NotSupported() const override { return {}; }
  Result<std::vector<DriverSample>> DriverSamples(int, DriverQuantity q,
                                                  std::uint64_t since_us) override {
    std::lock_guard<std::mutex> l(mu_);
    int n = ++reads_[q];
    if (q == DriverQuantity::kSmClock) return MakeError("Not Found (test)");
    if (q == DriverQuantity::kGpuUtil && fail_util_read_ == n) return MakeError("busy (test)");
    const Ring& r = q == DriverQuantity::kPower ? power_ : util_;
    auto now = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count() +
                                          100'000'000);  // the rings were filled long before
    std::uint64_t last = now / r.period_us;
    std::vector<DriverSample> out;
    for (std::uint64_t k = last - static_cast<std::uint64_t>(r.entries) + 1; k <= last; ++k)
      if (k * r.period_us > since_us) out.push_back({k * r.period_us, static_cast<double>(k)});
    return out;
  }
  int Reads(DriverQuantity q) {
    std::lock_guard<std::mutex> l(mu_);
    return reads_[q];
  }
  int fail_util_read_ = 0;  // this read (1-based) of utilization answers an error
  Sample poll_;             // what every poll answers

 private:
  Ring power_, util_;
  std::mutex mu_;
  std::map<DriverQuantity, int> reads_;
};

// Every step between two kept readings is the driver's period: none was lost.
void ExpectNoneLost(const DriverStream& d, std::uint64_t period_us) {
  ASSERT_GE(d.samples.size(), 2u) << ToString(d.quantity);
  for (std::size_t i = 1; i < d.samples.size(); ++i)
    ASSERT_EQ(d.samples[i].timestamp_us - d.samples[i - 1].timestamp_us, period_us)
        << ToString(d.quantity) << " reading " << i;
}

TEST(Sampler, EachDriverBufferIsReadAtItsOwnPaceAndNoReadingIsLost) {
  // Power: 121 readings 10 ms apart (1.2 s held: read every 0.6 s); utilization: 100 readings
  // 20 ms apart (1.98 s held: every 0.99 s). At the 50 ms floor each would be read ~40 times.
  RingDevice dev({10000, 121}, {20000, 100});
  SamplerOptions o{{0}, 0.01, 0.1, "", 0.5};
  o.driver_interval_s = 0.05;
  o.driver_max_interval_s = 10;
  Sampler s(dev, o);
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  ASSERT_TRUE(s.Stop().ok());
  // First read at 0.05 s, then every 0.6 s, and the last at the stop: about 5.
  EXPECT_GE(dev.Reads(DriverQuantity::kPower), 3);
  EXPECT_LE(dev.Reads(DriverQuantity::kPower), 8);
  EXPECT_GE(dev.Reads(DriverQuantity::kGpuUtil), 2);
  EXPECT_LE(dev.Reads(DriverQuantity::kGpuUtil), 5);
  EXPECT_EQ(dev.Reads(DriverQuantity::kSmClock), 1);  // its error is kept, not asked again
  auto streams = s.DriverStreams();
  ASSERT_EQ(streams.size(), 3u);
  for (const auto& d : streams) {
    if (d.quantity == DriverQuantity::kSmClock) {
      EXPECT_EQ(d.error, "Not Found (test)");
      continue;
    }
    EXPECT_EQ(d.error, "");
    ExpectNoneLost(d, d.quantity == DriverQuantity::kPower ? 10000 : 20000);
  }
  EXPECT_EQ(s.Stats().driver_reads, dev.Reads(DriverQuantity::kPower) +
                                        dev.Reads(DriverQuantity::kGpuUtil) +
                                        dev.Reads(DriverQuantity::kSmClock));
}

TEST(Sampler, ALaterDriverErrorIsAskedAgainNotKept) {
  RingDevice dev({10000, 50}, {10000, 50});  // 0.49 s held: every 0.245 s
  dev.fail_util_read_ = 2;
  SamplerOptions o{{0}, 0.01, 0.1, "", 0.5};
  o.driver_interval_s = 0.05;
  Sampler s(dev, o);
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_TRUE(s.Stop().ok());
  EXPECT_GE(dev.Reads(DriverQuantity::kGpuUtil), 3);
  for (const auto& d : s.DriverStreams()) {
    if (d.quantity == DriverQuantity::kSmClock) continue;
    EXPECT_EQ(d.error, "") << ToString(d.quantity);
    ExpectNoneLost(d, 10000);
  }
}

TEST(ProcessList, StillHoldsOnlyWhileTheMemoryUsedIsTheSameAndTheReadIsRecent) {
  ProcessRead last;
  last.ok = true;
  last.settled = true;
  last.at_s = 2.0;
  last.mem_used_bytes = 1000;
  EXPECT_TRUE(ProcessListStillHolds(last, 1000, 2.9, 1.0));
  EXPECT_FALSE(ProcessListStillHolds(last, 1000, 3.0, 1.0));          // a re-read due
  EXPECT_FALSE(ProcessListStillHolds(last, 1001, 2.1, 1.0));          // memory moved
  EXPECT_FALSE(ProcessListStillHolds(last, std::nullopt, 2.1, 1.0));  // memory not read
  EXPECT_FALSE(ProcessListStillHolds(last, 1000, 2.1, 0));            // reuse off
  ProcessRead unknown = last;
  unknown.mem_used_bytes.reset();
  EXPECT_FALSE(ProcessListStillHolds(unknown, 1000, 2.1, 1.0));
  ProcessRead moving = last;  // the read before it saw another memory used
  moving.settled = false;
  EXPECT_FALSE(ProcessListStillHolds(moving, 1000, 2.1, 1.0));
  ProcessRead failed = last;
  failed.ok = false;
  EXPECT_FALSE(ProcessListStillHolds(failed, 1000, 2.1, 1.0));
}

// A GPU whose memory used steps with the processes on it: generation G has G processes
// (pids 1..G) and G GiB used. Counts the process-list reads.
class SteppingDevice : public RingDevice {
 public:
  SteppingDevice() : RingDevice({10000, 10}, {10000, 10}) {}
  Sample Poll(int, bool with_slow) override {
    std::lock_guard<std::mutex> l(mu_);
    Sample s;
    s.sm_mhz = 1980;
    if (with_slow) s.mem_used_bytes = static_cast<std::uint64_t>(gen_) << 30;
    polled_gen_ = gen_;
    return s;
  }
  Result<std::vector<GpuProcess>> Processes(int) override {
    std::lock_guard<std::mutex> l(mu_);
    ++reads_;
    // Lagging, the list names the processes of the memory that the read before saw.
    int listed = lag_ ? listed_gen_ : polled_gen_;
    listed_gen_ = polled_gen_;
    std::vector<GpuProcess> v;
    for (int p = 1; p <= listed; ++p) v.push_back({static_cast<std::uint32_t>(p), "", {}});
    return v;
  }
  void Step() {
    std::lock_guard<std::mutex> l(mu_);
    ++gen_;
  }
  int reads() {
    std::lock_guard<std::mutex> l(mu_);
    return reads_;
  }
  bool lag_ = false;  // the driver lists a process one read after its memory shows

 private:
  std::mutex mu_;
  int gen_ = 1, polled_gen_ = 1, listed_gen_ = 1, reads_ = 0;
};

// Every snapshot names the processes that the memory used read at its time stands for, whether
// it was read or repeated; a repeated list is never older than the memory read beside it.
void ExpectEverySnapshotMatchesItsMemory(const Sampler& s) {
  std::map<double, std::uint64_t> mem_at;
  for (const auto& m : s.Samples())
    if (m.mem_used_bytes) mem_at[m.t_s] = *m.mem_used_bytes;
  auto snaps = s.Processes();
  ASSERT_FALSE(snaps.empty());
  for (const auto& snap : snaps) {
    ASSERT_TRUE(mem_at.count(snap.t_s)) << snap.t_s;
    EXPECT_EQ(static_cast<std::uint64_t>(snap.processes.size()) << 30, mem_at[snap.t_s])
        << "snapshot at " << snap.t_s;
  }
}

// 5 ms polls, a process list every 10 ms, no driver buffers.
SamplerOptions StepOptions(double reread_s) {
  SamplerOptions o{{0}, 0.005, 0.01, "", 0.5};
  o.process_reread_s = reread_s;
  o.driver_interval_s = 1e9;
  return o;
}

// Runs S for about 0.6 s while DEV steps three times, 150 ms apart.
void RunThreeSteps(Sampler& s, SteppingDevice& dev) {
  ASSERT_TRUE(s.Start().ok());
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    dev.Step();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE(s.Stop().ok());
}

TEST(Sampler, TheProcessListIsReadAgainWhenTheMemoryUsedMoves) {
  SteppingDevice dev;
  SamplerOptions o = StepOptions(0.2);
  Sampler s(dev, o);
  RunThreeSteps(s, dev);
  SamplerStats st = s.Stats();
  auto snaps = s.Processes();
  EXPECT_EQ(st.process_reads + st.process_reused, static_cast<long>(snaps.size()));
  EXPECT_EQ(st.process_reads, dev.reads());
  EXPECT_GT(st.process_reused, st.process_reads);  // a snapshot every 10 ms, a read far fewer
  EXPECT_EQ(snaps.back().processes.size(), 4u);    // the last step is seen
  ExpectEverySnapshotMatchesItsMemory(s);
  // The first poll and each step force two reads (the step's and the next, which settles it);
  // the rest are the re-read period's.
  EXPECT_GE(st.process_reads, 8);
}

TEST(Sampler, AListThatHoldsIsStillReadOncePerRereadPeriod) {
  SteppingDevice dev;  // its memory used never moves
  Sampler s(dev, StepOptions(0.05));
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_TRUE(s.Stop().ok());
  SamplerStats st = s.Stats();
  // Two reads to settle, then one each 50 ms of the ~40 snapshots: never none, never each.
  EXPECT_GE(st.process_reads, 4);
  EXPECT_GT(st.process_reused, st.process_reads);
  ExpectEverySnapshotMatchesItsMemory(s);
}

TEST(Sampler, AListThatLagsItsMemoryIsReadAgainOnceTheMemoryHolds) {
  // The driver lists a new process a read after its memory shows (as the H200's NVML does,
  // 0.3 s after a context's first allocation in call 3 of 2026-12-05): the read at the change gives
  // the old list, so the next poll reads again instead of repeating it until the re-read period.
  SteppingDevice dev;
  dev.lag_ = true;
  SamplerOptions o = StepOptions(1e9);  // no periodic re-read: only the memory's changes
  Sampler s(dev, o);
  RunThreeSteps(s, dev);
  auto snaps = s.Processes();
  ASSERT_FALSE(snaps.empty());
  EXPECT_EQ(snaps.back().processes.size(), 4u);
  EXPECT_GT(s.Stats().process_reused, s.Stats().process_reads);
}

TEST(Sampler, WithoutReuseEverySnapshotIsARead) {
  SteppingDevice dev;
  SamplerOptions o = StepOptions(0);
  Sampler s(dev, o);
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  dev.Step();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(s.Stop().ok());
  EXPECT_EQ(s.Stats().process_reused, 0);
  EXPECT_EQ(s.Stats().process_reads, static_cast<long>(s.Processes().size()));
  ExpectEverySnapshotMatchesItsMemory(s);
}

// Every line of the samples stream holds its sample's fields, the largest integers included,
// and its times as "{:.6f}" writes them.
TEST(Sampler, TheStreamWritesEverySampleFieldByField) {
  RingDevice dev({10000, 10}, {10000, 10});
  dev.poll_.sm_mhz = std::numeric_limits<int>::min();
  dev.poll_.mem_mhz = std::numeric_limits<int>::max();
  dev.poll_.power_mw = std::numeric_limits<std::int64_t>::min();
  dev.poll_.util_gpu_pct = 100;
  dev.poll_.util_mem_pct = -1;
  dev.poll_.reasons = std::numeric_limits<std::uint64_t>::max();
  dev.poll_.mem_used_bytes = std::numeric_limits<std::uint64_t>::max() - 1;
  dev.poll_.temp_c = 0;
  auto out = (std::filesystem::temp_directory_path() /
              ("vouch_sampler_fields." + std::to_string(::getpid()) + ".jsonl"))
                 .string();
  Sampler s(dev, SamplerOptions{{0}, 0.005, 10, out, 0.02});
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(s.Stop().ok());
  auto samples = s.Samples();
  ASSERT_GE(samples.size(), 3u);
  std::ifstream in(out);
  std::string line;
  std::size_t i = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    if (!j.contains("sm_mhz")) continue;  // a process snapshot
    ASSERT_LT(i, samples.size());
    const Sample& m = samples[i++];
    EXPECT_NE(line.find(fmt::format("\"t_s\":{:.6f},\"unix_s\":{:.6f},", m.t_s, m.unix_s)),
              std::string::npos)
        << line;
    EXPECT_EQ(j["gpu"], 0);
    EXPECT_EQ(j["sm_mhz"], *m.sm_mhz);
    EXPECT_EQ(j["mem_mhz"], *m.mem_mhz);
    EXPECT_EQ(j["power_mw"], *m.power_mw);
    EXPECT_EQ(j["util_gpu_pct"], 100);
    EXPECT_EQ(j["util_mem_pct"], -1);
    EXPECT_EQ(j["reasons"].get<std::uint64_t>(), *m.reasons);
    EXPECT_EQ(j["mem_used_bytes"].get<std::uint64_t>(), *m.mem_used_bytes);
    EXPECT_EQ(j["temp_c"], 0);
    EXPECT_EQ(line.back(), '}');
  }
  EXPECT_EQ(i, samples.size());
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace vouch
