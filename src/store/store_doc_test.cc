// The stored series text is what DumpJson made of LegSeries's tree, byte for byte.
#include "store/store_doc.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "store/store.h"
#include "telemetry/sample.h"
#include "util/json_io.h"

namespace vouch {
namespace {

std::vector<Sample> Readings(std::size_t n, unsigned seed, double t0) {
  std::mt19937 rng(seed);
  std::vector<Sample> out;
  for (std::size_t i = 0; i < n; ++i) {
    Sample s;
    s.gpu = static_cast<int>(rng() % 2);
    s.unix_s = t0 + static_cast<double>(i) * 0.0101 + (rng() % 7) * 1e-7;
    if (rng() % 9) s.sm_mhz = 1400 + static_cast<int>(rng() % 3) * 290;
    if (rng() % 11) s.power_mw = static_cast<std::int64_t>(rng() % 700000);
    if (rng() % 5) s.util_gpu_pct = static_cast<int>(rng() % 3) * 50;
    if (rng() % 3) s.reasons = rng() % 4;
    out.push_back(s);
  }
  return out;
}

TEST(StoreDoc, SeriesTextIsTheTreesDump) {
  const double t0 = 1796115924.444916;
  for (std::size_t n : {0, 1, 2, 3, 57, 4000, 9001, 20000})
    for (unsigned seed : {1u, 2u, 3u})
      for (int gpu : {0, 1, 2}) {
        auto s = Readings(n, seed + static_cast<unsigned>(n), t0);
        for (double start : {t0, t0 - 0.5, 0.0, -1e-9})
          EXPECT_EQ(LegSeriesText(s, gpu, start), DumpJson(LegSeries(s, gpu, start)))
              << n << " samples, seed " << seed << ", gpu " << gpu << ", t0 " << start;
      }
}

TEST(StoreDoc, SeriesTextOfOddNumbers) {
  // Equal readings collapse; nothing finite-breaking reaches the text that the tree would not
  // also write (a start of infinity makes every time null in both).
  std::vector<Sample> s(5);
  for (std::size_t i = 0; i < s.size(); ++i) s[i].unix_s = 1e9 + static_cast<double>(i);
  s[2].power_mw = std::numeric_limits<std::int64_t>::max();
  s[3].sm_mhz = -1;
  for (double start : {0.0, -0.0, 1e300, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()})
    EXPECT_EQ(LegSeriesText(s, 0, start), DumpJson(LegSeries(s, 0, start))) << start;
}

TEST(StoreDoc, LegSamplesAreReadFromARegularFileOnly) {
  // No stat before the read: the read itself refuses what is not a regular file, and a leg
  // whose stream cannot be read has no series (nullopt), never an error or a wait.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("vouch_legsamples_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "leg");
  const std::string line =
      "{\"gpu\":0,\"t_s\":0.5,\"unix_s\":1796115924.5,\"sm_mhz\":1980,\"power_mw\":627012}\n";
  std::ofstream(dir / "real.jsonl") << line;
  nlohmann::json leg = {{"dir", "leg"}, {"window", {{"samples_file", "s.jsonl"}}}};
  const fs::path at = dir / "leg" / "s.jsonl";
  EXPECT_FALSE(ReadLegSamples(dir.string(), leg).has_value());  // missing
  ASSERT_EQ(::mkfifo(at.c_str(), 0600), 0);
  EXPECT_FALSE(ReadLegSamples(dir.string(), leg).has_value());  // a FIFO: no wait for a writer
  fs::remove(at);
  fs::create_directory(at);
  EXPECT_FALSE(ReadLegSamples(dir.string(), leg).has_value());  // a directory
  fs::remove(at);
  fs::create_symlink(dir / "real.jsonl", at);  // a link to a regular file is read
  auto s = ReadLegSamples(dir.string(), leg);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].sm_mhz, 1980);
  EXPECT_EQ((*s)[0].power_mw, 627012);
  fs::remove(at);
  std::ofstream(at) << line << line.substr(0, 20);  // cut short: no series
  EXPECT_FALSE(ReadLegSamples(dir.string(), leg).has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vouch
