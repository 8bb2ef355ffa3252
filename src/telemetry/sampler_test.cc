#include "telemetry/sampler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "telemetry/fixed6.h"
#include "util/json_io.h"

namespace vouch {
namespace {

std::string Fixed6(double x) {
  std::string out;
  FormatFixed6(std::back_inserter(out), x);
  return out;
}

// The sampler's times are written as fmt's "{:.6f}" writes them, byte for byte.
TEST(FormatFixed6, IsFmtsSixDecimalsOnRandomAndEdgeValues) {
  std::mt19937_64 rng(20261204);
  std::uniform_real_distribution<double> unix_s(0, 4e9), t_s(0, 1e5), unit(0, 1);
  std::uniform_int_distribution<std::uint64_t> bits(0, 0x426D1A94A2000000ull);  // [0, 1e12)
  int checked = 0;
  auto same = [&](double x) {
    ASSERT_EQ(Fixed6(x), fmt::format("{:.6f}", x)) << fmt::format("{:a}", x);
    ++checked;
  };
  for (int i = 0; i < 100000; ++i) {
    same(unix_s(rng));
    same(t_s(rng));
    same(unit(rng));
    std::uint64_t b = bits(rng);
    double x;
    std::memcpy(&x, &b, sizeof x);
    same(x);
  }
  // Halves of a microsecond, exact (x.0078125 = 1/128) and nearly so, and the roll-over to
  // the next second.
  for (double whole : {0.0, 1.0, 17.0, 1795946969.0, 4e9, 999999999999.0}) {
    for (int k = 0; k < 128; ++k) same(whole + k / 128.0);
    for (int us = 0; us < 2000; ++us) {
      double x = whole + (us + 0.5) * 1e-6;
      same(x);
      same(std::nextafter(x, 0));
      same(std::nextafter(x, 1e13));
    }
    same(whole + 0.9999995);
    same(whole + 0.99999949999);
    same(whole + 0.9999999999);
  }
  for (double x :
       {0.0, -0.0, -1.5, -0.0000004, 1e12, 1e13, 1e300, 5e-324,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    same(x);
  EXPECT_GT(checked, 430000);
}

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
  auto out = (std::filesystem::temp_directory_path() / "vouch_sampler_fields.jsonl").string();
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

// A process snapshot's line is the tree's compact dump, byte for byte: names with quotes,
// control codes, markup, UTF-8 and invalid UTF-8, no used bytes, no processes, odd times.
TEST(Sampler, AProcessSnapshotLineIsItsTreesDump) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> names = {"python3",       "",
                                          "a\"b\\c",       "tab\there\nnl\x01\x1f",
                                          "<script>&amp;", "caf\xc3\xa9",
                                          "bad\xff\xfe",   std::string("nul\0in", 6)};
  const std::vector<double> times = {0,
                                     0.01,
                                     1795946969.123456,
                                     1e-7,
                                     123456789.5,
                                     -0.0,
                                     std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN()};
  for (int k = 0; k < 2000; ++k) {
    ProcessSnapshot p;
    p.gpu = static_cast<int>(rng() % 9) - 1;
    p.t_s = times[rng() % times.size()] + (k % 3 ? static_cast<double>(rng() % 100000) / 997 : 0);
    p.unix_s = times[rng() % times.size()];
    for (std::size_t n = rng() % 4; n > 0; --n) {
      GpuProcess q;
      q.pid = static_cast<std::uint32_t>(rng());
      q.name = names[rng() % names.size()];
      if (rng() % 2) q.used_bytes = rng();
      p.processes.push_back(q);
    }
    std::string line;
    AppendJsonLine(p, &line);
    ASSERT_EQ(line, DumpJson(ToJson(p)) + "\n") << k;
  }
}

}  // namespace
}  // namespace vouch
