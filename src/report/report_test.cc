#include "report/report.h"

#include <gtest/gtest.h>

#include "record/record.h"
#include "store/store.h"

namespace vouch {
namespace {

const std::string kStore = VOUCH_SOURCE_DIR "/tests/data/store";

ReportAssets Fake() {
  return {true, "1.6.32", "/*UPLOT_JS*/", "/*UPLOT_CSS*/", "/*APP_JS*/", "/*APP_CSS*/"};
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

nlohmann::json Data(const std::string& html) {
  std::string open = "<script type=\"application/json\" id=\"vouch-data\">";
  auto a = html.find(open);
  EXPECT_NE(a, std::string::npos);
  a += open.size();
  auto b = html.find("</script>", a);
  return nlohmann::json::parse(html.substr(a, b - a));
}

nlohmann::json RunRecord(const std::string& name) {
  auto rec = ReadRecordJson(kStore + "/" + name);
  EXPECT_TRUE(rec.ok()) << (rec.ok() ? "" : rec.error().message);
  AttachLegSeries(*rec, kStore + "/" + name);
  return *rec;
}

TEST(Report, ARunHasAClockAndPowerChartPerLegWithItsVerdict) {
  auto html = RenderRecordReport(RunRecord("run"), Fake());
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_EQ(Count(*html, "class=\"chart chart-leg\""), 3u);
  EXPECT_NE(html->find("<span id=\"verdict\">2 of 2 measured legs valid</span>"),
            std::string::npos);
  EXPECT_NE(html->find("SIMULATED DEVICE"), std::string::npos);
  EXPECT_NE(html->find("/*UPLOT_JS*/"), std::string::npos);
  EXPECT_NE(html->find("/*APP_CSS*/"), std::string::npos);
  auto d = Data(*html);
  ASSERT_EQ(d["charts"].size(), 4u);  // legs per arm + three legs
  const auto& leg = d["charts"][1];
  EXPECT_EQ(leg["kind"], "leg");
  EXPECT_EQ(leg["verdict"], "valid");
  EXPECT_EQ(leg["series"][0]["label"], "SM MHz");
  EXPECT_GT(leg["x"].size(), 3u);
  EXPECT_EQ(leg["series"][0]["values"][0], 1980);
  // The measured region (begin/end markers) is the shaded band, in seconds from the start.
  ASSERT_EQ(leg["marks"]["regions"].size(), 1u);
  EXPECT_GT(leg["marks"]["regions"][0][1].get<double>(),
            leg["marks"]["regions"][0][0].get<double>());
}

TEST(Report, AnAbShowsItsVerdictAndEveryPairsLogRatio) {
  auto html = RenderRecordReport(RunRecord("ab"), Fake());
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_NE(html->find("A/B verdict: <span id=\"verdict\">B faster</span>"), std::string::npos);
  auto d = Data(*html);
  const nlohmann::json* pairs = nullptr;
  const nlohmann::json* arms = nullptr;
  for (const auto& c : d["charts"]) {
    if (c["kind"] == "pairs") pairs = &c;
    if (c["kind"] == "arms") arms = &c;
  }
  ASSERT_TRUE(pairs && arms);
  EXPECT_EQ((*pairs)["series"][0]["values"].size(), 4u);
  EXPECT_NEAR((*pairs)["series"][0]["values"][0].get<double>(), 2.9, 0.3);
  EXPECT_EQ((*pairs)["marks"]["hbands"].size(), 1u);  // the interval
  EXPECT_EQ((*arms)["series"].size(), 2u);            // A and B
}

TEST(Report, AGateShowsItsTable) {
  auto html = RenderRecordReport(RunRecord("gate"), Fake());
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_NE(html->find("Gate: <span id=\"verdict\">fail</span>"), std::string::npos) << *html;
  EXPECT_NE(html->find("<td>tok_s</td>"), std::string::npos);
}

TEST(Report, TextIsEscapedAndTheDataCannotCloseItsScript) {
  auto rec = RunRecord("run");
  rec["caveats"].push_back("</script><script>alert(1)</script>");
  auto html = RenderRecordReport(rec, Fake());
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html->find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  EXPECT_EQ(HtmlEscape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
  // A number a hand replaced by markup is escaped like text.
  rec["valid_legs"] = "<img src=x onerror=alert(2)>";
  rec["summary"]["run"][0]["n"] = "<b>n</b>";
  html = RenderRecordReport(rec, Fake());
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("<img src=x"), std::string::npos);
  EXPECT_EQ(html->find("<b>n</b>"), std::string::npos);
  EXPECT_NE(html->find("&lt;img src=x onerror=alert(2)&gt;"), std::string::npos);
}

TEST(Report, ATrendDrawsItsStepsOrSaysWhyNot) {
  std::vector<TrendPoint> pts;
  for (int i = 0; i < 20; ++i) {
    TrendPoint p;
    p.run_key = "k" + std::to_string(i);
    p.commit = "commit" + std::to_string(10 + i);
    p.value = (i < 12 ? 100 : 97) * (1 + 0.001 * (i % 3));
    p.gpu_name = "H200";
    p.clock_sm_median_mhz = 1980;
    pts.push_back(p);
  }
  TrendQuery q;
  q.metric = "tok_s";
  auto s = BuildTrend(pts, q, TrendBy::kCommit);
  DetectSteps(s);
  auto html = RenderTrendReport(s, Fake());
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("Steps: <span id=\"verdict\">1 found</span>"), std::string::npos);
  auto d = Data(*html);
  EXPECT_EQ(d["charts"][0]["marks"]["vlines"].size(), 1u);
  EXPECT_EQ(d["charts"][0]["xlabels"][12], "commit22");
  pts[3].gpu_name = "H100";
  auto m = BuildTrend(pts, q, TrendBy::kCommit);
  DetectSteps(m);
  auto mixed = RenderTrendReport(m, Fake());
  EXPECT_NE(mixed->find("Steps: <span id=\"verdict\">not reported</span>"), std::string::npos);
  EXPECT_NE(mixed->find("mixes 2 GPUs"), std::string::npos);
}

TEST(Report, ATraceShowsItsComponentsLargestFirst) {
  nlohmann::json sum = {{"path", "trace.json.gz"},
                        {"format", "kineto"},
                        {"window", "decode_step"},
                        {"attribution", "unattributed"},
                        {"components",
                         {{"mlp",
                           {{"milliseconds", 2.5},
                            {"total_ns", 2500000},
                            {"percent_of_kernel_time", 25.0},
                            {"launches", 40},
                            {"top_kernel", "gemm"}}},
                          {"attention",
                           {{"milliseconds", 7.5},
                            {"total_ns", 7500000},
                            {"percent_of_kernel_time", 75.0},
                            {"launches", 80},
                            {"top_kernel", "flash_fwd"}}}}},
                        {"kernels", nlohmann::json::array({{{"name", "flash_fwd"},
                                                            {"component", "attention"},
                                                            {"count", 80},
                                                            {"total_ns", 7500000},
                                                            {"percent_of_kernel_time", 75.0},
                                                            {"median_ns", 90000}}})}};
  auto html = RenderTraceReport(sum, Fake());
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_NE(html->find("<span id=\"verdict\">2 components</span>"), std::string::npos);
  EXPECT_LT(html->find("<td>attention</td>"), html->find("<td>mlp</td>"));
  auto d = Data(*html);
  ASSERT_EQ(d["charts"].size(), 1u);
  EXPECT_EQ(d["charts"][0]["xlabels"][0], "attention");
  EXPECT_DOUBLE_EQ(d["charts"][0]["series"][0]["values"][0].get<double>(), 7.5);
}

TEST(Report, WithoutTheChartLibraryItSaysWhatToDo) {
  ReportAssets none;
  auto r = RenderRecordReport(RunRecord("run"), none);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("run scripts/setup.sh"), std::string::npos);
  EXPECT_FALSE(RenderTraceReport(nlohmann::json::object(), Fake()).ok());
}

TEST(Report, BuiltinAssetsAreEitherCompleteOrAbsent) {
  const auto& a = BuiltinReportAssets();
  EXPECT_FALSE(a.app_js.empty());
  EXPECT_NE(a.app_js.find("__vouch"), std::string_view::npos);
  if (a.have_uplot) {
    EXPECT_NE(a.uplot_js.find("uPlot"), std::string_view::npos);
    EXPECT_FALSE(a.uplot_version.empty());
  } else {
    EXPECT_TRUE(a.uplot_js.empty());
  }
}

}  // namespace
}  // namespace vouch
