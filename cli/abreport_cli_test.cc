// Issue 22, items 5 and 10, through the real binary: an A/B whose headline cannot be known
// is refused after its first leg with the metric names it has; `vouch ab --from RECORD`
// recomputes a verdict from the legs already measured; the report pages say what they show.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";

using testing_util::Has;
using Res = testing_util::ShellResult;

class AbReportCli : public testing_util::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::copy_file(kBusy, D("sim.jsonl"));
    // A leg with two user metrics: tok_s = SPEED (higher is better) and lat_ms = LAT (lower is
    // better), each with +-0.2 % noise; it counts its runs in legcount.
    Script(
        "leg.sh",
        "sleep 0.6\necho x >> legcount\n"
        "r=$(od -An -N2 -tu2 /dev/urandom)\n"
        "v=$(awk -v s=\"$SPEED\" -v r=\"$r\" 'BEGIN{printf \"%.5f\", s*(1+(r/65535-0.5)*0.004)}')\n"
        "l=$(awk -v s=\"$LAT\" -v r=\"$r\" 'BEGIN{printf \"%.5f\", s*(1+(r/65535-0.5)*0.004)}')\n"
        "echo \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$v,\\\"unit\\\":\\\"tok/s\\\","
        "\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n"
        "echo \"{\\\"name\\\":\\\"lat_ms\\\",\\\"value\\\":$l,\\\"unit\\\":\\\"ms\\\","
        "\\\"better\\\":\\\"lower\\\"}\" >> \"$VOUCH_METRICS\"\n");
  }
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock VOUCH_SIM={} {} {}",
                                           D(), D(), D("sim.jsonl"), VOUCH_BINARY, args));
  }
  int Legs() const {
    std::ifstream in(D("legcount"));
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
  }
};

// Item 5: two metrics and no --headline ran every leg, then refused "leg 3 has no ''".
TEST_F(AbReportCli, TwoMetricsWithoutHeadlineAreRefusedAfterTheFirstLeg) {
  auto r = Vouch(
      "ab --min-busy-readings 5 --a-env SPEED=100 --b-env SPEED=105 --env LAT=10 --pairs 4 "
      "--seed 1 --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "refused: leg 1 (A warmup) reported tok_s, lat_ms (2 user metrics), and the "
                  "verdict is about one: give --headline NAME (one of tok_s, lat_ms)"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "the other 9 planned legs were not run")) << r.out;
  EXPECT_FALSE(Has(r.out, "has no ''")) << r.out;
  EXPECT_EQ(Legs(), 1);
  auto rec = Json("r/record.json");
  EXPECT_EQ(rec["status"], "failed");
  EXPECT_EQ(rec["legs"].size(), 1u);
  auto show = Vouch("show r");
  EXPECT_EQ(show.rc, 0) << show.out;
  EXPECT_TRUE(Has(show.out, "A/B refused: leg 1 (A warmup) reported tok_s, lat_ms")) << show.out;
}

TEST_F(AbReportCli, AHeadlineTheFirstLegDoesNotReportIsRefusedWithTheNamesItHas) {
  auto r = Vouch(
      "ab --min-busy-readings 5 --a-env SPEED=100 --b-env SPEED=105 --env LAT=10 --pairs 4 "
      "--seed 1 --headline tokens --out r -- ./leg.sh");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "refused: leg 1 (A warmup) has no metric 'tokens' (--headline); it reported "
                  "tok_s, lat_ms (2 user metrics): give --headline with one of them"))
      << r.out;
  EXPECT_EQ(Legs(), 1);
}

// Item 5: the verdict about another metric, from the legs already measured.
TEST_F(AbReportCli, FromRecordRecomputesTheVerdictWithAnotherHeadline) {
  // B is 5 % faster in tok_s and 10 % slower in lat_ms.
  auto r = Vouch(
      "ab --min-busy-readings 5 --a-env SPEED=100 --a-env LAT=10 --b-env SPEED=105 --b-env "
      "LAT=11 --pairs 4 --seed 1 --band 1 --headline tok_s --out r -- ./leg.sh");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "A/B verdict: B faster")) << r.out;
  const int ran = Legs();
  const std::string before = Json("r/record.json").dump();

  auto lat = Vouch("ab --from r --headline lat_ms");
  EXPECT_EQ(lat.rc, 0) << lat.out;
  EXPECT_TRUE(
      Has(lat.out, "recomputed from the 10 legs of r (no leg run; the record is unchanged)"))
      << lat.out;
  EXPECT_TRUE(Has(lat.out, "A/B verdict: B slower")) << lat.out;
  EXPECT_TRUE(Has(lat.out, "headline  lat_ms (lower is better; given with --headline)")) << lat.out;
  EXPECT_TRUE(Has(lat.out, "pairs     4 used, 0 refused (fixed mode, seed 1")) << lat.out;
  EXPECT_EQ(Legs(), ran) << "--from runs no leg";
  EXPECT_EQ(Json("r/record.json").dump(), before) << "--from leaves the record as it is";

  auto js = Vouch("ab --from r --headline lat_ms --json --fail-on slower");
  EXPECT_EQ(js.rc, 5) << js.out;
  auto v = nlohmann::json::parse(js.out.substr(js.out.find('{')));
  EXPECT_EQ(v["verdict"], "B slower");
  EXPECT_EQ(v["headline"], "lat_ms");
  EXPECT_NEAR(v["decision"]["b_over_a"]["value"].get<double>(), 1.1, 0.01);

  auto same = Vouch("ab --from r");
  EXPECT_EQ(same.rc, 0) << same.out;
  EXPECT_TRUE(Has(same.out, "A/B verdict: B faster")) << same.out;

  auto none = Vouch("ab --from r --headline tokens");
  EXPECT_EQ(none.rc, 3) << none.out;
  EXPECT_TRUE(Has(none.out, "has no metric 'tokens' (--headline); it reported tok_s, lat_ms"))
      << none.out;

  auto show = Vouch("show r");
  EXPECT_TRUE(Has(show.out,
                  "another headline: vouch ab --from r --headline NAME recomputes the verdict "
                  "from these legs (their metrics: tok_s, lat_ms)"))
      << show.out;

  auto usage = Vouch("ab --from r -- ./leg.sh");
  EXPECT_EQ(usage.rc, 64) << usage.out;
  auto run =
      Vouch("run --min-busy-readings 5 --reps 1 --env SPEED=1 --env LAT=1 --out p -- ./leg.sh");
  auto not_ab = Vouch("ab --from p --headline tok_s");
  EXPECT_EQ(not_ab.rc, 1) << run.out << not_ab.out;
  EXPECT_TRUE(Has(not_ab.out, "a 'run' record, not one of vouch ab")) << not_ab.out;
}

// Item 10: the report pages. Each page's charts are described in its JSON data block; the
// browser test (tests/report/chromium_check.sh) checks how they are drawn.
class ReportPagesCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args) const {
    return testing_util::Shell(fmt::format("cd {} && {} {}", D(), VOUCH_BINARY, args));
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(D(rel));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // The page's chart descriptions (#vouch-data).
  static nlohmann::json Data(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"vouch-data\">";
    auto b = html.find(open);
    if (b == std::string::npos) return nullptr;
    b += open.size();
    return nlohmann::json::parse(html.substr(b, html.find("</script>", b) - b));
  }
  // Renders a report; false (test skipped) when this vouch was built without uPlot.
  bool Report(const std::string& args, const std::string& out) {
    auto r = Vouch(fmt::format("report {} -o {}", args, out));
    if (Has(r.out, "built without the report's chart library")) return false;
    EXPECT_EQ(r.rc, 0) << r.out;
    return true;
  }
};

const std::string kStore = VOUCH_SOURCE_DIR "/tests/data/store";

TEST_F(ReportPagesCli, AShortTrendSaysItIsTooShortAndDrawsAttributedPointsFilled) {
  // 5 commits with an 8 % cliff after the 3rd: too few points for the test at p <= 0.01
  // (3 on each side at least; 8 points were too few for the permutation test alone).
  for (int i = 0; i < 5; ++i) {
    const std::string d = D(fmt::format("runs/r{}", i));
    fs::create_directories(d);
    fs::copy(kStore + "/run", d, fs::copy_options::recursive);
    auto rec = Json(fmt::format("runs/r{}/record.json", i));
    rec["started_unix_s"] = 1796000000.0 + 600 * i;
    rec["revisions"] =
        nlohmann::json::array({{{"path", "/src"},
                                {"git", true},
                                {"commit", fmt::format("{:07x}{:033d}", 0xabc000 + 17 * i, 0)},
                                {"dirty", false},
                                {"branch", "main"}}});
    for (auto& s : rec["summary"]["run"])
      if (s["name"] == "tok_s") s["median"] = 1234.5 * (i >= 3 ? 0.92 : 1.0);
    std::ofstream(d + "/record.json") << rec.dump();
  }
  auto add = Vouch("history add --store t.sqlite runs/r*");
  ASSERT_EQ(add.rc, 0) << add.out;
  auto text = Vouch("history trend tok_s --store t.sqlite");
  EXPECT_TRUE(Has(
      text.out,
      "steps: none can be found yet: the series is too short to find a step reliably (5 points; "
      "at p <= 0.01 the test needs at least 6)"))
      << text.out;
  if (!Report("--store t.sqlite --trend tok_s", "trend.html")) GTEST_SKIP() << "no uPlot";
  const std::string html = Read("trend.html");
  EXPECT_TRUE(Has(html, "<span id=\"verdict\">series too short</span>")) << html.substr(0, 3000);
  EXPECT_TRUE(Has(html,
                  "too short to find a step reliably (5 points; at p &lt;= 0.01 the test needs at "
                  "least 6)"));
  EXPECT_FALSE(Has(html, "0 found"));
  EXPECT_TRUE(Has(html, "filled points: attributed"));
  auto data = Data(html);
  ASSERT_TRUE(data.is_object());
  const auto& trend = data["charts"][0];
  EXPECT_EQ(trend["kind"], "trend");
  EXPECT_EQ(trend["series"][0]["hollow"], false) << trend["series"].dump();
  for (const auto& s : trend["series"])
    if (s["label"] == "unattributed") {
      EXPECT_EQ(s["hollow"], true);
    }
}

TEST_F(ReportPagesCli, TheClockAxisIsScaledToTheSamplesAndTheMaxClock) {
  if (!Report(kStore + "/run", "run.html")) GTEST_SKIP() << "no uPlot";
  auto data = Data(Read("run.html"));
  ASSERT_TRUE(data.is_object());
  int legs = 0;
  for (const auto& c : data["charts"]) {
    if (c["kind"] != "leg") continue;
    ++legs;
    // Every sample of the fixture is at 1980 MHz, its max clock: a narrow axis around it.
    ASSERT_TRUE(c.contains("ranges")) << c.dump().substr(0, 300);
    const auto& r = c["ranges"]["mhz"];
    EXPECT_EQ(r[0].get<double>(), 1970) << r.dump();
    EXPECT_EQ(r[1].get<double>(), 1990) << r.dump();
  }
  EXPECT_EQ(legs, 3);
}

TEST_F(ReportPagesCli, TheGatePageShowsEachMetricsInterval) {
  fs::copy(kStore + "/gate", D("gate"), fs::copy_options::recursive);
  auto rec = Json("gate/record.json");
  auto& rows = rec["extra"]["gate"]["rows"];
  rows[0]["interval"] = {{"lo_pct", -5.1}, {"hi_pct", -3.6}, {"alpha_one_sided", 0.025}};
  for (size_t i = 1; i < rows.size(); ++i) rows[i]["noise_note"] = "one trial: noise not judged";
  std::ofstream(D("gate/record.json")) << rec.dump();
  if (!Report("gate", "gate.html")) GTEST_SKIP() << "no uPlot";
  const std::string html = Read("gate.html");
  EXPECT_TRUE(Has(html, "<th>interval</th>")) << html.substr(0, 4000);
  EXPECT_TRUE(
      Has(html, "<td class=\"interval\">-5.10 % .. -3.60 % (one-sided 2.5 % each end)</td>"))
      << html.substr(0, 6000);
}

TEST_F(ReportPagesCli, TheTracePageLeadsWithItsTopFinding) {
  auto sum = Vouch(fmt::format(
      "trace summarize {}/kineto_lm_small.json.gz --rules {}/tests/data/trace/decode_rules.json "
      "--json > trace.json",
      VOUCH_FIXTURES_DIR, VOUCH_SOURCE_DIR));
  ASSERT_EQ(sum.rc, 0) << sum.out;
  auto j = Json("trace.json");
  ASSERT_FALSE(j["bottleneck_ranking"].empty());
  if (!Report("trace.json", "trace.html")) GTEST_SKIP() << "no uPlot";
  const std::string html = Read("trace.html");
  const auto& top = j["bottleneck_ranking"][0];
  const std::string want =
      top["kind"] == "gpu_idle"
          ? fmt::format("GPU idle {:.1f} % of the span", top["percent_of_span"].get<double>())
          : fmt::format("{} {:.1f} % of kernel time", top["name"].get<std::string>(),
                        top["percent_of_kernel_time"].get<double>());
  EXPECT_TRUE(Has(html, "<h2>Top finding: <span id=\"top-finding\">" + want)) << want;
  // Every entry of the ranking is listed, the idle time among them when the trace has any.
  for (const auto& r : j["bottleneck_ranking"])
    if (r["kind"] == "gpu_idle") {
      EXPECT_TRUE(Has(html, fmt::format("<li>GPU idle {:.1f} % of the span",
                                        r["percent_of_span"].get<double>())));
    }
}

}  // namespace
}  // namespace vouch
