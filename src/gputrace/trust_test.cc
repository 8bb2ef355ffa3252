#include "gputrace/trust.h"

#include <gtest/gtest.h>

#include <string>

#include "trace/cupti_reader.h"

namespace vouch::gputrace {
namespace {

constexpr std::int64_t kT0 = 1764412345000000000;
constexpr std::int64_t kMs = 1000000;

// A header as libvouch_cupti.so writes it (tracer.cc), with EXTRA fields after "pid".
std::string Header(const std::string& extra) {
  return R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":4242,"ppid":1,)"
         R"("cmdline":["python3","loop.py"],"clock":"CLOCK_REALTIME","timestamp_callback":true,)"
         R"("timestamp_offset_ns":0,"measured_offset_ns":12,"start_unix_ns":)" +
         std::to_string(kT0) + extra + R"(,"api":"off","api_from":"default","ok":true})" + "\n";
}

std::string Kernel(std::int64_t at_ns, int corr) {
  return R"({"t":"k","s":)" + std::to_string(at_ns) + R"(,"e":)" + std::to_string(at_ns + 3000) +
         R"(,"dev":0,"ctx":1,"str":7,"corr":)" + std::to_string(corr) +
         R"(,"n":0,"grid":[1,1,1],"block":[128,1,1]})" + "\n";
}

std::string Count(std::int64_t at_ns, std::int64_t k) {
  return R"({"t":"lc","ts":)" + std::to_string(at_ns) + R"(,"k":)" + std::to_string(k) + "}\n";
}

std::string Footer(std::int64_t kernels, std::int64_t launches, std::int64_t records) {
  return R"({"type":"footer","end_unix_ns":)" + std::to_string(kT0 + 2000 * kMs) +
         R"(,"kernels":)" + std::to_string(kernels) + R"(,"dropped":0,"kernel_launches":)" +
         std::to_string(launches) + R"(,"kernel_records":)" + std::to_string(records) + "}\n";
}

LegGpuTrace Fold(const std::string& text, std::optional<RegionNs> region) {
  auto t = trace::ParseCuptiTrace(text, "gpu-trace.4242.jsonl");
  EXPECT_TRUE(t.ok()) << t.error().message;
  return AnalyzeTrace(*t, region);
}

const std::string kCounting =
    R"(,"launch_count":"on","cupti_path":"/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/)"
    R"(lib/libcupti.so.12","cupti_loaded_version":"12.8","cupti_choice":"the one the process loaded")";

// The issue 35 leg: a copy loop under torch.profiler. The tracer saw the first kernels, then
// Kineto registered its own buffer callbacks and every later record went to it; the tracer's
// launch callback went on counting.
std::string ProfilerTookTheRecords() {
  std::string s = Header(kCounting) + R"({"t":"n","id":0,"v":"copy_kernel"})" + "\n";
  s += Kernel(kT0 + 1 * kMs, 1) + Kernel(kT0 + 2 * kMs, 2);
  for (int i = 1; i <= 10; ++i) s += Count(kT0 + i * 100 * kMs, 2210 * i);
  return s + Footer(2, 22100, 2);
}

TEST(TraceTrust, ASecondClientThatTookTheRecordsRefusesEveryFigure) {
  // The region starts after the profiler: no kernel in it, 22,100 launches.
  LegGpuTrace g = Fold(ProfilerTookTheRecords(), RegionNs{kT0 + 50 * kMs, kT0 + 1050 * kMs});
  EXPECT_EQ(g.kernels, 0);
  ASSERT_EQ(g.checks.size(), 1u);
  EXPECT_TRUE(g.checks[0].counting);
  EXPECT_EQ(g.checks[0].kernel_launches, 22100);
  EXPECT_EQ(g.checks[0].kernel_records, 2);
  // Count lines at 100 ms .. 1000 ms lie inside: 22,100 - 2,210.
  EXPECT_EQ(g.checks[0].region_launches, 19890);
  EXPECT_NE(g.checks[0].cupti.find("libcupti.so.12"), std::string::npos);
  auto r = TraceRefusals(g, nullptr);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NE(r[0].find("pid 4242: the tracer counted 22100 kernel launches and received 2 kernel "
                      "records"),
            std::string::npos)
      << r[0];
  EXPECT_NE(r[0].find("took the other 22098"), std::string::npos);
  EXPECT_NE(r[0].find("run the traced leg without the program's own profiler"), std::string::npos);
  EXPECT_NE(r[1].find("the measured region had at least 19890 kernel launches"), std::string::npos)
      << r[1];
}

TEST(TraceTrust, ARecordJudgesTheSame) {
  LegGpuTrace g = Fold(ProfilerTookTheRecords(), RegionNs{kT0 + 50 * kMs, kT0 + 1050 * kMs});
  g.refused = TraceRefusals(g, nullptr);
  auto back = LegGpuTraceFromJson(ToJson(g), "leg 1");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(TraceRefusals(*back, nullptr), g.refused);
  EXPECT_EQ(back->refused, g.refused);
  ASSERT_EQ(back->checks.size(), 1u);
  EXPECT_EQ(back->checks[0].region_launches, 19890);
  // A record from before the checks existed has none, and nothing refuses it.
  auto j = ToJson(g);
  j.erase("tracer_checks");
  j.erase("refused");
  j["kernels"] = 3;
  auto old = LegGpuTraceFromJson(j, "leg 1");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->checks.empty());
  EXPECT_TRUE(TraceRefusals(*old, nullptr).empty());
  // A malformed check is an error naming the leg, never a silent pass.
  j["tracer_checks"] = nlohmann::json::array({{{"pid", "x"}}});
  auto bad = LegGpuTraceFromJson(j, "leg 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("leg 1: malformed \"tracer_checks\""), std::string::npos);
}

TEST(TraceTrust, AWholeTraceThatMatchesItsLaunchesIsTrusted) {
  std::string s = Header(kCounting) + R"({"t":"n","id":0,"v":"copy_kernel"})" + "\n";
  for (int i = 0; i < 5; ++i) s += Kernel(kT0 + (i + 1) * kMs, i + 1);
  s += Count(kT0 + 100 * kMs, 5) + Footer(5, 5, 5);
  LegGpuTrace g = Fold(s, std::nullopt);
  EXPECT_EQ(g.kernels, 5);
  EXPECT_EQ(g.checks[0].region_launches, 5);
  EXPECT_TRUE(TraceRefusals(g, nullptr).empty());
  // More records than counted launches (device-side launches) is not a loss.
  s = Header(kCounting) + R"({"t":"n","id":0,"v":"copy_kernel"})" + "\n" + Kernel(kT0 + kMs, 1) +
      Kernel(kT0 + 2 * kMs, 1) + Footer(2, 1, 2);
  EXPECT_TRUE(TraceRefusals(Fold(s, std::nullopt), nullptr).empty());
}

TEST(TraceTrust, AFailedSubscriptionNamesTheOtherClient) {
  std::string s =
      Header(R"(,"launch_count":"failed","subscribe_error":"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_)"
             R"(NOT_SUPPORTED","other_subscriber":"CUPTI for Nsight Systems")") +
      R"({"t":"n","id":0,"v":"gemm"})" + "\n" + Kernel(kT0 + kMs, 1) + Footer(1, -1, -1);
  LegGpuTrace g = Fold(s, std::nullopt);
  EXPECT_FALSE(g.checks[0].counting);
  auto r = TraceRefusals(g, nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("pid 4242: the tracer could not subscribe to CUPTI "
                      "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, held by 'CUPTI for Nsight "
                      "Systems')"),
            std::string::npos)
      << r[0];
}

TEST(TraceTrust, ALostSubscriptionRefuses) {
  std::string s = Header(kCounting) + R"({"t":"n","id":0,"v":"gemm"})" + "\n" +
                  Kernel(kT0 + kMs, 1) + Count(kT0 + 100 * kMs, 1) + R"({"t":"lost","ts":)" +
                  std::to_string(kT0 + 300 * kMs) +
                  R"x(,"what":"the tracer's launch callback (cuptiGetCallbackState failed)"})x" +
                  "\n" + Footer(1, 1, 1);
  auto r = TraceRefusals(Fold(s, std::nullopt), nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("pid 4242: the tracer's launch callback (cuptiGetCallbackState failed) "
                      "vanished while the process ran"),
            std::string::npos)
      << r[0];
}

TEST(TraceTrust, ABusyGpuWithNoKernelRefusesWhateverTheCause) {
  // A trace from a tracer that counted nothing (an older one, or counting off): only the
  // sampler can tell. Kernels outside the region, none inside.
  std::string s = Header("") + R"({"t":"n","id":0,"v":"gemm"})" + "\n" + Kernel(kT0 + kMs, 1) +
                  Footer(1, -1, -1);
  LegGpuTrace g = Fold(s, RegionNs{kT0 + 10 * kMs, kT0 + 900 * kMs});
  EXPECT_EQ(g.kernels, 0);
  WindowSummary w;
  GpuWindow gw;
  gw.fold.gpu = 0;
  gw.fold.readings = 9;
  gw.fold.busy_readings = 0;
  w.gpus.push_back(gw);
  EXPECT_TRUE(TraceRefusals(g, &w).empty());  // an idle GPU and no kernel agree
  w.gpus[0].fold.busy_readings = 7;
  auto r = TraceRefusals(g, &w);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("GPU 0 was busy in 7 of 9 readings over the measured region and the trace "
                      "holds no kernel in it"),
            std::string::npos)
      << r[0];
  // One kernel inside the region: the rule does not judge how many.
  g = Fold(s, RegionNs{kT0, kT0 + 900 * kMs});
  EXPECT_EQ(g.kernels, 1);
  EXPECT_TRUE(TraceRefusals(g, &w).empty());
}

TEST(TraceTrust, CountLinesBadlyOrderedAreRefusedByName) {
  std::string s = Header(kCounting) + Count(kT0 + kMs, 5) + Count(kT0 + 2 * kMs, 4);
  auto t = trace::ParseCuptiTrace(s, "gpu-trace.4242.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("gpu-trace.4242.jsonl:3: launch count 4 is negative or below"),
            std::string::npos)
      << t.error().message;
}

TEST(TraceTrust, ATracerWithNoCuptiThatFitsSaysWhyInTheRefusal) {
  const std::string h =
      R"({"type":"header","format":"vouch-gpu-trace","version":1,"pid":7,"cmdline":["x"],)"
      R"x("error":"no CUPTI found fits a driver for CUDA 12.8 (CUPTI 13.0 at /v/libcupti.so.13)",)x"
      R"("ok":false})"
      "\n";
  auto t = trace::ParseCuptiTrace(h, "gpu-trace.7.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "gpu-trace.7.jsonl: the tracer did not trace this process: no CUPTI found fits a "
            "driver for CUDA 12.8 (CUPTI 13.0 at /v/libcupti.so.13)");
}

}  // namespace
}  // namespace vouch::gputrace
