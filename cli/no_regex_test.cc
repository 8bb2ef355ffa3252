// Keeps std::regex out of the project (issue 21): it backtracks and recursed once per character
// (a 50 KB ncu metric name crashed `vouch ncu`). Patterns are RE2, which runs in linear time.
// Walks the source folders, as `grep -rn` would, so that ctest catches a new include.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vouch {
namespace {

namespace fs = std::filesystem;

TEST(SourceTree, NoFileIncludesTheStdRegexHeader) {
  const std::string needle = std::string("<") + "regex>";  // not spelt whole: this file is walked
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const char* dir : {"src", "cli", "include", "bench", "fuzz"}) {
    const fs::path root = fs::path(VOUCH_SOURCE_DIR) / dir;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
      if (!e.is_regular_file()) continue;
      ++files;
      std::ifstream in(e.path(), std::ios::binary);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        if (line.find(needle) != std::string::npos)
          found.push_back(fmt::format("{}:{}: {}", e.path().string(), n, line));
    }
  }
  EXPECT_GT(files, 100u) << "the source tree was not found under " VOUCH_SOURCE_DIR;
  std::string all;
  for (const auto& f : found) all += f + "\n";
  EXPECT_TRUE(found.empty()) << "use RE2 (re2/re2.h), never std::regex:\n" << all;
}

}  // namespace
}  // namespace vouch
