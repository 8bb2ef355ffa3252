// Drives the real vouch binary: exit codes, messages, JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "trace/test_util.h"

namespace vouch::trace {
namespace {

using testing::DataPath;
using testing::RunCommand;

const std::string kVouch = VOUCH_BINARY;
const std::string kFixture = std::string(VOUCH_FIXTURES_DIR) + "/kineto_lm_small.json.gz";

std::string Vouch(const std::string& args, int* rc) {
  return RunCommand(kVouch + " " + args + " 2>&1", rc);
}

TEST(TraceCli, SummarizeWindowJson) {
  int rc = -1;
  std::string out =
      RunCommand(kVouch + " trace summarize " + kFixture + " --window decode_step --json", &rc);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["window"], "decode_step");
  EXPECT_EQ(j["instance_count"], 32);
  EXPECT_EQ(j["totals"]["kernel_count"], 2144);
  EXPECT_EQ(j["totals"]["kernel_sum_ns"], 22803292);
  EXPECT_TRUE(j["components"].contains("gemm"));
  EXPECT_FALSE(j["bottleneck_ranking"].empty());
  out = RunCommand(kVouch + " trace summarize " + kFixture +
                       " --window decode_step --json --rules " + DataPath("decode_rules.json"),
                   &rc);
  ASSERT_EQ(rc, 0) << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["components"].size(), 4u);  // attention, gemm, norm, other
  EXPECT_EQ(j["components"]["attention"]["launches"],
            128);  // the cuDNN SDPA kernel, 4 layers x 32 steps
  EXPECT_EQ(j["components"]["gemm"]["launches"], 800);
  EXPECT_EQ(j["components"]["norm"]["launches"], 256);
}

TEST(TraceCli, WholeRunWithPhasesWarnsOnStderr) {
  int rc = -1;
  std::string err = RunCommand(kVouch + " trace summarize " + kFixture + " 2>&1 >/dev/null", &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(err.find("Which annotation?"), std::string::npos) << err;
  EXPECT_NE(err.find("--window decode_step"), std::string::npos);
}

TEST(TraceCli, ErrorsAndExitCodes) {
  int rc = -1;
  std::string out = Vouch("trace summarize /nonexistent/t.json", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("/nonexistent/t.json: cannot open"), std::string::npos) << out;
  out = Vouch("trace summarize", &rc);
  EXPECT_EQ(rc, 64);
  EXPECT_NE(out.find("FILE is required"), std::string::npos) << out;
  out = Vouch("trace summarize " + kFixture + " --bogus", &rc);
  EXPECT_EQ(rc, 64);
  out = Vouch("trace summarize " + kFixture + " --window nope", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("no annotation or NVTX range named 'nope'"), std::string::npos) << out;
  out = Vouch("trace summarize " + DataPath("no_kernels.json"), &rc);
  EXPECT_EQ(rc, 2);  // no GPU work in the window
  EXPECT_NE(out.find("no GPU work"), std::string::npos) << out;
  out = Vouch("trace summarize " + kFixture + " --rules /nonexistent/rules.json", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("/nonexistent/rules.json"), std::string::npos);
  out = Vouch("trace diff " + kFixture, &rc);
  EXPECT_EQ(rc, 64);
  out = Vouch("trace diff " + kFixture + " " + kFixture + " --lengths 5 5", &rc);
  EXPECT_EQ(rc, 64);
  EXPECT_NE(out.find("two different positive lengths"), std::string::npos) << out;
  out = Vouch("trace", &rc);
  EXPECT_EQ(rc, 64);
  EXPECT_NE(out.find("needs a subcommand"), std::string::npos) << out;
  out = Vouch("ncu /nonexistent.csv", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("/nonexistent.csv"), std::string::npos);
  out = Vouch("ncu " + kFixture, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("no Nsight Compute CSV header"), std::string::npos);
}

TEST(TraceCli, DiffAndNcuRun) {
  int rc = -1;
  std::string out = RunCommand(kVouch + " trace diff " + kFixture + " " + DataPath("small.json") +
                                   " --window decode_step --json",
                               &rc);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_FALSE(j["removed_kernels"].empty());
  EXPECT_FALSE(j["added_kernels"].empty());
  EXPECT_FALSE(j["warnings"].empty());  // 32 instances against 2
  out = RunCommand(kVouch + " trace diff " + kFixture + " " + kFixture +
                       " --window decode_step --lengths 128 256",
                   &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("ns/unit len"), std::string::npos);
  out = RunCommand(kVouch + " ncu " + std::string(VOUCH_FIXTURES_DIR) + "/ncu_raw.csv --json", &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(nlohmann::json::parse(out)["kernels"].size(), 6u);
}

TEST(TraceCli, DiffReadsInHumanUnitsAndAsMarkdown) {
  int rc = -1;
  // The same trace twice: 0 -> 0 instances is unchanged, not "new"; durations in their unit.
  std::string out =
      Vouch("trace diff " + DataPath("small.json") + " " + DataPath("small.json"), &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("  elapsed_ns                       2.1 ms           2.1 ms             0 ns "
                     "   +0.00 %\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  instances                             0                0                0  "
                     "unchanged\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find(" new\n"), std::string::npos) << out;
  EXPECT_EQ(out.find(".0 \n"), std::string::npos) << out;
  // A window against another trace: changes with signs, a share's change in points.
  out =
      Vouch("trace diff " + kFixture + " " + DataPath("small.json") + " --window decode_step", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("  elapsed_ns                      75.2 ms         100.0 us         -75.1 ms "
                     "  -99.87 %\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  busy_percent                     30.9 %           58.4 %         +27.5 pp "
                     "  +88.81 %\n"),
            std::string::npos)
      << out;
  // Markdown: to stdout with -, or into a file beside the text.
  out = Vouch("trace diff " + kFixture + " " + DataPath("small.json") +
                  " --window decode_step --top 3 --markdown -",
              &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out.rfind("**vouch trace diff**: A `", 0), 0u) << out;
  EXPECT_NE(out.find("| elapsed_ns | 75.2 ms | 100.0 us | -75.1 ms | -99.87 % |\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| `gemm` | 18.550 ms | 0.022 ms | -18.528 ms | -99.88 % | 800 | 2 |\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Kernels (top 3 of "), std::string::npos) << out;
  EXPECT_NE(out.find("<details><summary>"), std::string::npos) << out;
  const std::string md = ::testing::TempDir() + "/vouch_trace_diff.md";
  out = Vouch("trace diff " + kFixture + " " + DataPath("small.json") +
                  " --window decode_step --markdown " + md,
              &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("kernels (by absolute change)"), std::string::npos) << out;  // the text
  int cat_rc = -1;
  EXPECT_NE(RunCommand("cat " + md, &cat_rc).find("| `gemm` | 18.550 ms"), std::string::npos);
  out = Vouch(
      "trace diff " + kFixture + " " + DataPath("small.json") + " --markdown /nonexistent/dir/x.md",
      &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("/nonexistent/dir/x.md"), std::string::npos) << out;
}

TEST(TraceCli, SummarizeAsMarkdownOnStdoutAndToAFile) {
  int rc = -1;
  std::string out =
      Vouch("trace summarize " + kFixture + " --window decode_step --markdown -", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("**vouch trace summarize**: `"), std::string::npos) << out;
  EXPECT_NE(out.find("window `decode_step`"), std::string::npos) << out;
  EXPECT_NE(out.find("| component | time | share | launches |\n|---|---:|---:|---:|\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| count | total | share | mean | median | max | name |"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("bottleneck ranking\n"), std::string::npos) << out;  // not the text form
  std::string file = ::testing::TempDir() + "/vouch_summary.md";
  std::remove(file.c_str());
  out = Vouch("trace summarize " + DataPath("small.json") + " --markdown " + file, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("bottleneck ranking"), std::string::npos) << out;  // the text stays on stdout
  std::ifstream in(file);
  std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("| elapsed | "), std::string::npos) << md;
  // A folder that does not exist: an error naming it, exit 1.
  out = Vouch("trace summarize " + DataPath("small.json") + " --markdown /nonexistent/x.md", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("/nonexistent/x.md"), std::string::npos) << out;
}

TEST(TraceCli, NcuAsMarkdown) {
  int rc = -1;
  const std::string csv = std::string(VOUCH_FIXTURES_DIR) + "/ncu_raw.csv";
  std::string out = Vouch("ncu " + csv + " --markdown -", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("**vouch ncu**: `"), std::string::npos) << out;
  EXPECT_NE(out.find("| id | duration | SM MHz |"), std::string::npos) << out;
  EXPECT_NE(out.find("|---:|---:|---:|"), std::string::npos) << out;
  EXPECT_NE(out.find(" us | "), std::string::npos) << out;  // a duration cell
  out = Vouch("ncu " + csv + " --markdown /nonexistent/n.md", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("/nonexistent/n.md"), std::string::npos) << out;
}

}  // namespace
}  // namespace vouch::trace
