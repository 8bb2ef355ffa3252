// The ncu CSV read in chunks (issue 39): any chunking gives the table of the whole text, a
// row past the cap and a quote that never closes are errors naming the file and line, and
// only the first kernel keeps its metric map.
#include "ncu/ncu_stream.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ncu/csv.h"
#include "util/json_io.h"

namespace vouch::ncu {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kRaw = Slurp(std::string(VOUCH_FIXTURES_DIR) + "/ncu_raw.csv");
const std::string kDetails = Slurp(std::string(VOUCH_FIXTURES_DIR) + "/ncu_details.csv");
const std::string kStalls =
    Slurp(std::string(VOUCH_SOURCE_DIR) + "/tests/data/ncu/raw_with_stalls.csv");

// TEXT fed STEP bytes at a time: the JSON, or the error.
std::string InChunks(const std::string& text, std::size_t step) {
  NcuCsvStream s("t.csv");
  for (std::size_t at = 0; at < text.size(); at += step)
    if (auto st = s.Feed(std::string_view(text).substr(at, step)); !st)
      return "error: " + st.error().message;
  auto r = s.Finish();
  return r ? DumpJson(NcuToJson(*r), 2) : "error: " + r.error().message;
}

TEST(NcuStream, AnyChunkingGivesTheTableOfTheWholeText) {
  std::string crlf;
  for (char c : kStalls) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  for (const std::string* text :
       std::vector<const std::string*>{&kRaw, &kDetails, &kStalls, &crlf}) {
    const std::string whole = InChunks(*text, text->size());
    ASSERT_EQ(whole.rfind("error", 0), std::string::npos) << whole;
    for (std::size_t step : std::vector<std::size_t>{1, 2, 3, 7, 64, 1000, 4096}) {
      SCOPED_TRACE(step);
      EXPECT_EQ(InChunks(*text, step), whole);
    }
  }
  // The same for the refusals: two exports appended, a quote that never closes.
  for (const std::string& bad : {kRaw + kRaw, kDetails.substr(0, kDetails.size() - 300)})
    for (std::size_t step : std::vector<std::size_t>{1, 5, 4096, bad.size()}) {
      SCOPED_TRACE(step);
      EXPECT_EQ(InChunks(bad, step), InChunks(bad, bad.size()));
      EXPECT_EQ(InChunks(bad, step).rfind("error: t.csv", 0), 0u) << InChunks(bad, step);
    }
}

TEST(NcuStream, OnlyTheFirstKernelKeepsItsMetricsAndEveryKernelCountsThem) {
  auto raw = ParseNcuCsv(kRaw, "raw.csv");
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  ASSERT_EQ(raw->kernels.size(), 6u);
  EXPECT_EQ(raw->kernels[0].metrics.size(), 564u);  // 566 columns less ID and Kernel Name
  EXPECT_EQ(raw->kernels[0].metrics.at("launch__registers_per_thread").value, "168");
  for (const auto& k : raw->kernels) EXPECT_EQ(k.metric_count, 564u) << k.id;
  EXPECT_TRUE(raw->kernels[5].metrics.empty());
  auto details = ParseNcuCsv(kDetails, "details.csv");
  ASSERT_TRUE(details.ok()) << details.error().message;
  EXPECT_EQ(details->kernels[0].metrics.size(), 50u);
  EXPECT_EQ(details->kernels[0].metrics.at("Memory Throughput").unit, "%");
  EXPECT_EQ(details->kernels[0].metrics.at("Duration").unit, "ns");
  EXPECT_EQ(details->kernels[3].metric_count, 50u);
  // --json a kernel at a time is the tree's text, stalls and all.
  auto stalls = ParseNcuCsv(kStalls, "stalls.csv");
  ASSERT_TRUE(stalls.ok()) << stalls.error().message;
  ASSERT_FALSE(stalls->kernels[0].top_stalls.empty());
  for (const NcuReport* r : std::vector<const NcuReport*>{&*raw, &*details, &*stalls}) {
    std::string pieces;
    WriteNcuJson(*r, [&](std::string_view p) { pieces += p; });
    EXPECT_EQ(pieces, DumpJson(NcuToJson(*r), 2) + "\n");
  }
  EXPECT_TRUE(details->kernels[3].metrics.empty());
}

TEST(NcuStream, LaunchIdsInAnyOrderAndRepeatsAreTold) {
  const std::string head =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n";
  auto rows = [&](std::initializer_list<const char*> ids) {
    std::string o = head;
    for (const char* id : ids) o += fmt::format("\"{}\",\"k{}\",\"10\"\n", id, id);
    return o;
  };
  auto shuffled = ParseNcuCsv(rows({"2", "0", "1", "01", "x"}), "o.csv");
  ASSERT_TRUE(shuffled.ok()) << shuffled.error().message;
  ASSERT_EQ(shuffled->kernels.size(), 5u);  // "01" is an ID of its own, as ncu wrote it
  EXPECT_EQ(shuffled->kernels[0].id, "0");
  EXPECT_EQ(shuffled->kernels[3].id, "2");
  // A repeat of a counted ID (0, 1, 2 in order) and of one out of order (5 after 7).
  for (auto [ids, want] :
       {std::pair{rows({"0", "1", "2", "1"}), std::string("r.csv:6: launch ID 1 again (its first "
                                                          "row is on line 4)")},
        std::pair{rows({"7", "5", "9", "5"}), std::string("r.csv:6: launch ID 5 again (its first "
                                                          "row is on line 4)")}}) {
    auto r = ParseNcuCsv(ids, "r.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

TEST(NcuStream, AQuoteThatNeverClosesNamesItsLineInTheFile) {
  // Two lines of program output, the header on line 3, the open quote on line 5.
  const std::string text =
      "==PROF== Connected\nout\n\"ID\",\"Kernel Name\",\"Duration\"\n\"0\",\"k\",\"1\"\n"
      "\"1\",\"k\",\"2\n\n";
  auto r = ParseNcuCsv(text, "q.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("q.csv: a quoted CSV field that starts on line 5 never ends"),
            std::string::npos)
      << r.error().message;
}

TEST(NcuStream, ARowPastTheCapIsRefusedWithItsLine) {
  CsvReader reader("cap.csv", 10, 100);
  int rows = 0;
  const CsvReader::RowSink count = [&](const CsvFields&, std::size_t) -> Status {
    ++rows;
    return OkStatus();
  };
  ASSERT_TRUE(reader.Feed("\"a\",\"b\"\n\"c\",\"", count).ok());
  EXPECT_EQ(rows, 1);
  Status st = OkStatus();
  for (int i = 0; i < 20 && st.ok(); ++i) st = reader.Feed(std::string(10, 'x'), count);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("cap.csv:11: a CSV row of more than 100 bytes"),
            std::string::npos)
      << st.error().message;
}

TEST(NcuStream, CsvRowsAndLinesDoNotDependOnTheChunks) {
  const std::string text = "a,\"b\"\"c\",\"two\nlines\"\r\n\n\"\",x\"y\"z\r\nlast,\"q\"";
  auto whole = ParseCsv(text, "t.csv");
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->size(), 3u);
  EXPECT_EQ((*whole)[0], (CsvRow{"a", "b\"c", "two\nlines"}));
  EXPECT_EQ((*whole)[1], (CsvRow{"", "xyz"}));
  EXPECT_EQ((*whole)[2], (CsvRow{"last", "q"}));
  for (std::size_t step = 1; step <= text.size(); ++step) {
    SCOPED_TRACE(step);
    CsvReader reader("t.csv");
    std::vector<CsvRow> rows;
    std::vector<std::size_t> lines;
    const CsvReader::RowSink keep = [&](const CsvFields& f, std::size_t line) -> Status {
      rows.emplace_back(f.begin(), f.end());
      lines.push_back(line);
      return OkStatus();
    };
    for (std::size_t at = 0; at < text.size(); at += step)
      ASSERT_TRUE(reader.Feed(std::string_view(text).substr(at, step), keep).ok());
    ASSERT_TRUE(reader.Finish(keep).ok());
    EXPECT_EQ(rows, *whole);
    EXPECT_EQ(lines, (std::vector<std::size_t>{1, 4, 5}));
  }
}

TEST(NcuStream, AFileOfManyReadChunksReadsAsTheWholeText) {
  // Kernel names long enough that rows straddle the reader's 1 MiB chunks.
  const std::size_t h = kRaw.find("\"ID\"");
  const std::size_t units = kRaw.find('\n', h) + 1;
  const std::size_t first = kRaw.find('\n', units) + 1;
  std::string text = "==PROF== x\n" + kRaw.substr(h, first - h);
  const std::string row = kRaw.substr(first, kRaw.find('\n', first) + 1 - first);
  const std::size_t p1 = row.find("\",\""), p2 = row.find("\",\"", p1 + 3);
  const std::string rest = row.substr(p2 + 2);  // from the third field on
  for (int id = 0; text.size() < (3u << 20) + 12345; ++id)
    text +=
        fmt::format("\"{}\",\"kernel_{}_{}\",", id, id, std::string(5000 + id % 977, 'n')) + rest;
  const std::string path = testing::TempDir() + "/ncu_many_chunks.csv";
  std::ofstream(path, std::ios::binary) << text;
  auto file = ReadNcuCsv(path);
  auto whole = ParseNcuCsv(text, path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_GT(file->kernels.size(), 300u);
  EXPECT_EQ(DumpJson(NcuToJson(*file), 2), DumpJson(NcuToJson(*whole), 2));
  std::string pieces;
  WriteNcuJson(*file, [&](std::string_view p) { pieces += p; });
  EXPECT_EQ(pieces, DumpJson(NcuToJson(*whole), 2) + "\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vouch::ncu
