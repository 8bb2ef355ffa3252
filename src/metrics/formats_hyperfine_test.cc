// hyperfine and pytest-benchmark on real output of each tool (tests/data/metrics/README.md)
// and on hostile variants of it.
#include "metrics/formats_hyperfine.h"

#include <gtest/gtest.h>

#include "metrics/metrics_test_util.h"

namespace vouch {
namespace {

using metrics_test::ReadData;

const Metric* Find(const Result<std::vector<Metric>>& r, const std::string& name) {
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return nullptr;
  }
  const Metric* m = FindMetric(*r, name);
  if (!m) ADD_FAILURE() << "no metric " << name;
  return m;
}

std::string Error(const Result<std::vector<Metric>>& r) {
  return r ? std::string("(no error)") : r.error().message;
}

TEST(Hyperfine, EveryStatisticWithItsPerRunTimes) {
  auto r = ParseHyperfine(ReadData("hyperfine.json"), "hf.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->size(), 14u);  // two commands, seven statistics each
  const Metric* mean = Find(r, "sleep 0.01.mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_DOUBLE_EQ(mean->value, 0.04380844271999999);
  EXPECT_EQ(mean->unit, "s");
  EXPECT_EQ(mean->better, Better::kLower);
  EXPECT_EQ(mean->source, "hyperfine hf.json");
  ASSERT_EQ(mean->samples.size(), 5u);
  EXPECT_DOUBLE_EQ(mean->samples[0], 0.05318713372);
  const Metric* med = Find(r, "sleep 0.02.median");
  ASSERT_NE(med, nullptr);
  EXPECT_DOUBLE_EQ(med->value, 0.051569978720000006);
  EXPECT_EQ(med->samples.size(), 5u);
  const Metric* sys = Find(r, "sleep 0.02.system");
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->value, 0.0);
  EXPECT_TRUE(sys->samples.empty());
}

TEST(Hyperfine, AFailingCommandIsAnErrorNamingItsExitCodes) {
  // Real output of `hyperfine -i --runs 3 'sh -c "exit 3"'`.
  auto r = ParseHyperfine(ReadData("hyperfine_failing.json"), "hf.json");
  EXPECT_EQ(Error(r),
            "hf.json: hyperfine command 'sh -c \"exit 3\"' failed in 3 of 3 runs (exit codes "
            "3,3,3): the times of a failing command are not a measurement (hyperfine -i hides "
            "this); fix the command");
  auto signal = ParseHyperfine(
      R"({"results":[{"command":"x","mean":1,"times":[1,1],"exit_codes":[0,null]}]})", "s.json");
  EXPECT_NE(Error(signal).find("failed in 1 of 2 runs (exit codes 0,signal)"), std::string::npos)
      << Error(signal);
}

TEST(Hyperfine, HostileFilesAreClearErrors) {
  EXPECT_EQ(Error(ParseHyperfine("", "a.json")),
            "a.json: empty: no hyperfine results (did the tool fail or write elsewhere?)");
  EXPECT_NE(
      Error(ParseHyperfine("{\"results\":[", "a.json")).find("a.json: not valid hyperfine JSON"),
      std::string::npos);
  EXPECT_EQ(Error(ParseHyperfine("{\"benchmarks\":[]}", "a.json")),
            "a.json: no \"results\" array: not hyperfine --export-json output");
  EXPECT_EQ(Error(ParseHyperfine("{\"results\":[]}", "a.json")),
            "a.json: \"results\" is empty: nothing was measured");
  EXPECT_EQ(Error(ParseHyperfine(R"({"results":[{"mean":1}]})", "a.json")),
            "a.json: result 1 has no \"command\" string");
  EXPECT_EQ(Error(ParseHyperfine(R"({"results":[{"command":"x","mean":"fast"}]})", "a.json")),
            "a.json: result 1 ('x'): \"mean\" is not a number (got \"fast\")");
  EXPECT_EQ(
      Error(ParseHyperfine(R"({"results":[{"command":"x","mean":1,"times":[1,"y"]}]})", "a.json")),
      "a.json: result 1 ('x'): \"times\"[1] is not a finite number (got \"y\")");
  EXPECT_EQ(Error(ParseHyperfine(R"({"results":[{"command":"x"}]})", "a.json")),
            "a.json: result 1 ('x') has no \"mean\" or any other time");
  // One run: hyperfine writes a null stddev; the metric is simply absent.
  auto one = ParseHyperfine(R"({"results":[{"command":"x","mean":1,"stddev":null}]})", "a.json");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->size(), 1u);
  // The same command twice (two --parameter-list values with no {} in it).
  auto twice = ParseHyperfine(R"({"results":[{"command":"x","mean":1},{"command":"x","mean":2}]})",
                              "a.json");
  ASSERT_TRUE(twice);
  EXPECT_EQ(Find(twice, "x[2].mean")->value, 2);
}

// Issue 21: a sweep whose command text does not hold its parameter (`-n decode`, or the
// parameter only in --prepare) was named decode, decode[2] by position, so the same sweep in
// the other order swapped its figures. It is keyed by hyperfine's "parameters" object.
TEST(Hyperfine, ASweepIsKeyedByItsParametersNotItsPosition) {
  auto fwd = ParseHyperfine(ReadData("hyperfine_sweep.json"), "a.json");           // -L ms 10,50
  auto rev = ParseHyperfine(ReadData("hyperfine_sweep_reversed.json"), "b.json");  // 50,10
  ASSERT_TRUE(fwd) << fwd.error().message;
  ASSERT_TRUE(rev) << rev.error().message;
  for (const auto* r : {&fwd, &rev}) {
    const Metric* ten = Find(*r, "decode[ms=10].mean");
    const Metric* fifty = Find(*r, "decode[ms=50].mean");
    ASSERT_NE(ten, nullptr);
    ASSERT_NE(fifty, nullptr);
    EXPECT_EQ(FindMetric(**r, "decode.mean"), nullptr);
    EXPECT_EQ(FindMetric(**r, "decode[2].mean"), nullptr);
    EXPECT_LT(ten->value, 0.03);    // sleep 0.010, whichever position it ran in
    EXPECT_GT(fifty->value, 0.04);  // sleep 0.050
  }
  EXPECT_DOUBLE_EQ(FindMetric(*fwd, "decode[ms=10].mean")->value, 0.012664452666666668);
  EXPECT_DOUBLE_EQ(FindMetric(*rev, "decode[ms=10].mean")->value, 0.012714340333333332);
  // The parameter only in --prepare: the command is `true` twice.
  auto prep = ParseHyperfine(ReadData("hyperfine_sweep_prepare.json"), "p.json");
  ASSERT_TRUE(prep) << prep.error().message;
  EXPECT_NE(Find(prep, "true[ms=10].mean"), nullptr);
  EXPECT_NE(Find(prep, "true[ms=50].mean"), nullptr);
  EXPECT_EQ(FindMetric(*prep, "true[2].mean"), nullptr);
  // Several parameters in key order; numbers as hyperfine would print them; a wrong shape is
  // an error naming the result.
  auto two = ParseHyperfine(
      R"({"results":[{"command":"x","mean":1,"parameters":{"z":"b","a":3}}]})", "t.json");
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_NE(Find(two, "x[a=3,z=b].mean"), nullptr);
  EXPECT_EQ(
      Error(ParseHyperfine(R"({"results":[{"command":"x","mean":1,"parameters":[1]}]})", "t.json")),
      "t.json: result 1 ('x'): \"parameters\" is not an object (got a JSON array)");
  EXPECT_EQ(Error(ParseHyperfine(
                R"({"results":[{"command":"x","mean":1,"parameters":{"n":null}}]})", "t.json")),
            "t.json: result 1 ('x'): parameter 'n' is not a string or a number (got null)");
}

TEST(PytestBenchmark, EveryStatisticWithItsRounds) {
  auto r = ParsePytestBenchmark(ReadData("pytest_benchmark.json"), "pb.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->size(), 24u);  // three benchmarks, eight statistics each
  const Metric* mean = Find(r, "test_bench.py::test_fib_10.mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_DOUBLE_EQ(mean->value, 6.900199878145941e-06);
  EXPECT_EQ(mean->unit, "s");
  EXPECT_EQ(mean->better, Better::kLower);
  ASSERT_EQ(mean->samples.size(), 5u);
  EXPECT_DOUBLE_EQ(mean->samples[0], 6.859999302832875e-06);
  const Metric* ops = Find(r, "test_bench.py::test_fib_param[12].ops");
  ASSERT_NE(ops, nullptr);
  EXPECT_DOUBLE_EQ(ops->value, 62050.136486621515);
  EXPECT_EQ(ops->unit, "ops/s");
  EXPECT_EQ(ops->better, Better::kHigher);
  const Metric* rounds = Find(r, "test_bench.py::test_fib_param[5].rounds");
  ASSERT_NE(rounds, nullptr);
  EXPECT_EQ(rounds->value, 5);
}

TEST(PytestBenchmark, HostileFilesAreClearErrors) {
  EXPECT_EQ(Error(ParsePytestBenchmark("{\"results\":[]}", "p.json")),
            "p.json: no \"benchmarks\" array: not pytest-benchmark --benchmark-json output");
  EXPECT_EQ(Error(ParsePytestBenchmark(R"({"benchmarks":[{"name":"t"}]})", "p.json")),
            "p.json: benchmark 1 ('t') has no \"stats\" object (did the benchmark run?)");
  EXPECT_EQ(Error(ParsePytestBenchmark(R"({"benchmarks":[{"stats":{"mean":1}}]})", "p.json")),
            "p.json: benchmark 1 has no \"fullname\" or \"name\"");
  EXPECT_EQ(Error(ParsePytestBenchmark(
                R"({"benchmarks":[{"name":"t","stats":{"mean":1,"data":[1,null]}}]})", "p.json")),
            "p.json: benchmark 1 ('t'): stats: \"data\"[1] is not a finite number (got null)");
  EXPECT_EQ(Error(ParsePytestBenchmark(R"({"benchmarks":[{"name":"t","stats":{}}]})", "p.json")),
            "p.json: benchmark 1 ('t'): \"stats\" has no \"mean\"");
}

}  // namespace
}  // namespace vouch
